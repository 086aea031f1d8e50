/**
 * Open streams held to their key's access across nodes: two
 * real `nerkh serve` processes on one PostgreSQL database (created and
 * dropped here) and a redis-server of the test's own (stopped for the last
 * case). A change made by the admin CLI (which announces it) or written to
 * the store by this process (which announces nothing: the nodes' store poll
 * finds it) ends, or narrows, a stream open on the other node within 2 s,
 * also while Redis is down.
 *
 * Needs `npm run build` first and NERKH_TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';
import { OwnRedis } from '../support/redis.js';
import { needs, POSTGRES_URL } from '../support/services.js';
import { BRIEF_SECONDS, envelopeOf, issueWorkingKey, keysOf, openAdmitted, untilEvent, WITHIN_MS, writeConfig, writeValues } from '../stream/access-fixtures.js';
import type { SseStream } from '../stream/sse-client.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, runCli, startServer, type ServerProcess } from './helpers.js';

const requirement = needs('postgres', 'redis');
if (!requirement.skip) assertBuilt();

describe('open streams follow their key on every node', requirement, () => {
  const dir = tempDir('nerkh-stream-nodes-');
  const database = `nerkh_streams_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Pool({ connectionString: POSTGRES_URL ?? undefined, max: 1 });
  const sourcePath = join(dir.path, 'alpha.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const streams: SseStream[] = [];
  let redis: OwnRedis;
  let databaseUrl = '';
  let store: Store;
  let nodeA: ServerProcess;
  let nodeB: ServerProcess;

  const env = (name: string): Record<string, string> => ({
    NERKH_DATABASE_URL: databaseUrl,
    NERKH_REDIS_URL: redis.url,
    NERKH_REDIS_PREFIX: 'nerkh-test:',
    NERKH_CONFIG: configPath,
    NERKH_DATA_DIR: join(dir.path, name),
    NERKH_LOG_LEVEL: 'warn',
  });
  const cli = (args: string[]) => cliOk(cleanEnv(env('cli')), args);

  const connect = (node: ServerProcess, key: string, query = '') => openAdmitted(node.base, key, query, streams);
  /** An account on `plan` and a key for it, made in the store and working on both nodes. */
  const keyFor = (username: string, plan: string, expiresAt: number | null = null) => issueWorkingKey(store, [nodeA.base, nodeB.base], username, plan, expiresAt);

  before(async () => {
    await admin.query(`create database ${database}`);
    const url = new URL(POSTGRES_URL!);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
    redis = await OwnRedis.create();
    await redis.start();
    writeConfig(configPath, sourcePath);
    writeValues(sourcePath, 1);
    store = await Store.open({ databaseUrl, dataDir: dir.path });
    nodeA = await startServer(env('a'));
    nodeB = await startServer(env('b'));
    for (const node of [nodeA, nodeB]) await pollUntil(() => get(node.base, '/readyz'), (r) => r.status === 200, 10_000);
  });

  after(async () => {
    for (const stream of streams) stream.close();
    await Promise.all([nodeA, nodeB].map((node) => node?.kill()));
    await store?.close();
    await redis?.stop();
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [database]).catch(() => {});
    await admin.query(`drop database if exists ${database}`);
    await admin.end();
    dir.cleanup();
  });

  it('a key revoked with the CLI ends its streams on both nodes within 2 s', async (t) => {
    const { id, key } = await keyFor('revoked', 'wide');
    const open = [await connect(nodeB, key, '?keys=usd_free'), await connect(nodeB, key), await connect(nodeA, key)];
    await cli(['keys', 'revoke', id]);
    const revokedAt = (await store.keys.find(id))!.revoked_at!;
    for (const stream of open) {
      assert.equal(envelopeOf(await stream.end(WITHIN_MS + 1000)).error, 'API_KEY_INVALID');
      assert.ok(stream.endedAt! - revokedAt <= WITHIN_MS, `ended ${stream.endedAt! - revokedAt} ms after the revocation`);
      t.diagnostic(`ended ${stream.endedAt! - revokedAt} ms after the revocation`);
    }
  });

  it('an account suspended in the store, with no notice sent, ends its stream on node B within 2 s', async (t) => {
    const { key } = await keyFor('suspended', 'wide');
    const stream = await connect(nodeB, key, '?keys=usd_free');
    await store.accounts.update('suspended', { status: 'suspended' });
    const suspendedAt = Date.now();
    const envelope = envelopeOf(await stream.end(WITHIN_MS + 1000));
    assert.equal(envelope.error, 'SERVICE_NOT_ACTIVE');
    assert.match(envelope.message, /suspended/);
    assert.ok(stream.endedAt! - suspendedAt <= WITHIN_MS, `ended ${stream.endedAt! - suspendedAt} ms after the store write`);
    t.diagnostic(`ended ${stream.endedAt! - suspendedAt} ms after the store write`);
  });

  it('a key reaching its expiry ends its stream on node B within 2 s of it', async (t) => {
    // Room for the key to reach both nodes (issueWorkingKey waits up to 3 s) before it expires.
    const expiresAt = Date.now() + 6000;
    const { key } = await keyFor('expiring', 'wide', expiresAt);
    const stream = await connect(nodeB, key);
    assert.equal(envelopeOf(await stream.end(9000)).error, 'API_KEY_INVALID');
    assert.ok(stream.endedAt! >= expiresAt && stream.endedAt! - expiresAt <= WITHIN_MS, `ended ${stream.endedAt! - expiresAt} ms after the expiry`);
    t.diagnostic(`ended ${stream.endedAt! - expiresAt} ms after the expiry`);
  });

  it('a plan change with the CLI narrows the streams on node B, and ends the one left with nothing', async (t) => {
    const { key } = await keyFor('narrowed', 'wide');
    const listed = await connect(nodeB, key, '?keys=coin_emami,eur_free,usd_free');
    const outside = await connect(nodeB, key, '?keys=gold_18k');
    await cli(['accounts', 'set', 'narrowed', '--plan', 'narrow']);
    const changedAt = Date.now();
    const { event, at } = await untilEvent(listed, (e) => e.event === 'snapshot', 1, WITHIN_MS + 1000);
    assert.deepEqual(keysOf(event), ['eur_free', 'usd_free'], 'the allowed keys, in request order');
    assert.ok(at - changedAt <= WITHIN_MS, `narrowed ${at - changedAt} ms after the CLI returned`);
    t.diagnostic(`narrowed ${at - changedAt} ms after the CLI returned`);
    assert.equal(envelopeOf(await outside.end(WITHIN_MS + 1000)).error, 'REFERENCE_NOT_IN_PLAN');
    assert.equal(listed.ended, false);
  });

  it('max_stream_seconds ends a stream on node B with a reconnect event', async () => {
    const { key } = await keyFor('brief', 'brief');
    const stream = await connect(nodeB, key, '?keys=usd_free');
    const last = await stream.end(BRIEF_SECONDS * 1000 + 3000);
    assert.equal(last?.event, 'reconnect', JSON.stringify(last));
  });

  it('with Redis down, a key revoked with the CLI still ends its stream on node B within 2 s (the store poll)', async (t) => {
    const { id, key } = await keyFor('unannounced', 'wide');
    const stream = await connect(nodeB, key, '?keys=usd_free');
    await redis.stop();
    const result = await runCli(cleanEnv(env('cli')), ['keys', 'revoke', id]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Redis unreachable/);
    const revokedAt = (await store.keys.find(id))!.revoked_at!;
    assert.equal(envelopeOf(await stream.end(WITHIN_MS + 1000)).error, 'API_KEY_INVALID');
    assert.ok(stream.endedAt! - revokedAt <= WITHIN_MS, `ended ${stream.endedAt! - revokedAt} ms after the revocation`);
    t.diagnostic(`ended ${stream.endedAt! - revokedAt} ms after the revocation, Redis down`);
  });
});
