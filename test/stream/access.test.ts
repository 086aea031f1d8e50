/**
 * Open streams held to their key's access on one real embedded
 * `nerkh serve` process (SQLite, no Redis), changed by the admin CLI or the
 * store from this process: a revoked or expired key, a suspended account and
 * a plan without streams end the stream with an `error` event within 2 s; a
 * plan with fewer references narrows it; `max_stream_seconds` ends it with a
 * `reconnect` event.
 *
 * Needs `npm run build` first (the server and the CLI run from dist/).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { CHECK_MS } from '../../src/stream/watch.js';
import { BRIEF_SECONDS, envelopeOf, issueWorkingKey, keysOf, openAdmitted, untilEvent, WITHIN_MS, writeConfig, writeValues } from './access-fixtures.js';
import { openStream, ratesOf, type SseStream } from './sse-client.js';

describe('open streams follow their key on one embedded node', () => {
  const dir = tempDir('nerkh-stream-access-');
  const sourcePath = join(dir.path, 'alpha.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = { NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'warn' };
  const cliEnv = cleanEnv(env);
  const streams: SseStream[] = [];
  let server: ServerProcess;
  let store: Store;

  const connect = (key: string, query = '', headers: Record<string, string> = {}) => openAdmitted(server.base, key, query, streams, headers);
  const keyFor = (username: string, plan: string, expiresAt: number | null = null) => issueWorkingKey(store, [server.base], username, plan, expiresAt);

  before(async () => {
    assertBuilt();
    writeConfig(configPath, sourcePath);
    writeValues(sourcePath, 1);
    store = await Store.open({ databaseUrl: null, dataDir: env.NERKH_DATA_DIR });
    server = await startServer(env);
    await pollUntil(() => get(server.base, '/readyz'), (response) => response.status === 200, 10_000);
  });

  after(async () => {
    for (const stream of streams) stream.close();
    await server?.kill();
    await store?.close();
    dir.cleanup();
  });

  it('a key revoked with the CLI: its streams end with API_KEY_INVALID within 2 s; another key of the account streams on', async (t) => {
    const revoked = await keyFor('revoked', 'wide');
    const kept = await store.keys.issue((await store.accounts.find('revoked'))!.id);
    await pollUntil(() => get(server.base, '/v1/rates/usd_free', kept.key), (response) => response.status === 200, 3000);
    const ending = [await connect(revoked.key, '', { 'x-request-id': 'stream-revoked-1' }), await connect(revoked.key, '?keys=usd_free')];
    const staying = await connect(kept.key, '?keys=usd_free');

    await cliOk(cliEnv, ['keys', 'revoke', revoked.id]);
    const revokedAt = (await store.keys.find(revoked.id))!.revoked_at!;
    for (const stream of ending) {
      const envelope = envelopeOf(await stream.end(WITHIN_MS + 1000));
      assert.equal(envelope.error, 'API_KEY_INVALID');
      assert.equal(envelope.success, false);
      assert.ok(stream.endedAt! - revokedAt <= WITHIN_MS, `ended ${stream.endedAt! - revokedAt} ms after the revocation`);
      t.diagnostic(`ended ${stream.endedAt! - revokedAt} ms after the revocation`);
    }
    assert.equal(envelopeOf(ending[0]!.events.at(-1)).request_id, 'stream-revoked-1', 'the envelope quotes the opening request');
    // The key of the same account keeps its stream: a change rechecks every stream, and ends only those it refuses.
    writeValues(sourcePath, 2);
    await untilEvent(staying, (event) => event.event === 'rates', 1);
    assert.equal(staying.ended, false);
    const again = await openStream(server.base, '/v1/stream', { 'x-api-key': revoked.key });
    assert.equal(again.status, 401);
  });

  it('a key reaching its expiry: its stream ends with API_KEY_INVALID within 2 s of it, not before', async (t) => {
    // Room for the key to reach the server (issueWorkingKey waits up to 3 s) before it expires.
    const expiresAt = Date.now() + 6000;
    const expiring = await keyFor('expiring', 'wide', expiresAt);
    const stream = await connect(expiring.key, '?keys=usd_free');
    const envelope = envelopeOf(await stream.end(9000));
    assert.equal(envelope.error, 'API_KEY_INVALID');
    assert.ok(stream.endedAt! >= expiresAt, `ended ${expiresAt - stream.endedAt!} ms before the expiry`);
    assert.ok(stream.endedAt! - expiresAt <= WITHIN_MS, `ended ${stream.endedAt! - expiresAt} ms after the expiry`);
    t.diagnostic(`ended ${stream.endedAt! - expiresAt} ms after the expiry`);
  });

  it('an account suspended with the CLI, or moved to a plan without streams: SERVICE_NOT_ACTIVE within 2 s', async (t) => {
    const suspended = await keyFor('suspended', 'wide');
    const downgraded = await keyFor('downgraded', 'wide');
    const streamsOf = { suspended: await connect(suspended.key), downgraded: await connect(downgraded.key, '?keys=usd_free,eur_free') };
    for (const [username, change] of [['suspended', ['--status', 'suspended']], ['downgraded', ['--plan', 'basic']]] as const) {
      await cliOk(cliEnv, ['accounts', 'set', username, ...change]);
      const changedAt = Date.now();
      const stream = streamsOf[username];
      const envelope = envelopeOf(await stream.end(WITHIN_MS + 1000));
      assert.equal(envelope.error, 'SERVICE_NOT_ACTIVE');
      assert.match(envelope.message, username === 'suspended' ? /suspended/ : /stream service is not included in the basic plan/);
      assert.ok(stream.endedAt! - changedAt <= WITHIN_MS, `${username}: ended ${stream.endedAt! - changedAt} ms after the CLI returned`);
      t.diagnostic(`${username}: ended ${stream.endedAt! - changedAt} ms after the CLI returned`);
    }
  });

  it('a plan that drops alerts ends the streams with rules (SERVICE_NOT_ACTIVE within 2 s) and keeps the others', async (t) => {
    const alerting = await keyFor('alerting', 'alerting');
    const withRules = await connect(alerting.key, `?keys=usd_free&alerts=${encodeURIComponent('usd_free>=1')}`);
    const withoutRules = await connect(alerting.key, '?keys=usd_free');
    await cliOk(cliEnv, ['accounts', 'set', 'alerting', '--plan', 'wide']);
    const changedAt = Date.now();
    const envelope = envelopeOf(await withRules.end(WITHIN_MS + 1000));
    assert.equal(envelope.error, 'SERVICE_NOT_ACTIVE');
    assert.match(envelope.message, /alerts service is not included in the wide plan/);
    assert.ok(withRules.endedAt! - changedAt <= WITHIN_MS, `ended ${withRules.endedAt! - changedAt} ms after the CLI returned`);
    t.diagnostic(`the stream with rules ended ${withRules.endedAt! - changedAt} ms after the CLI returned`);
    // The same key's stream without rules needs only `stream`, which the new plan keeps.
    await new Promise((resolve) => setTimeout(resolve, CHECK_MS + 500));
    assert.equal(withoutRules.endedAt, null, 'the stream without rules stays open');
  });

  it('a plan with fewer references narrows each stream to what it allows, with a fresh snapshot, or ends one left with none', async (t) => {
    const { key } = await keyFor('narrowed', 'wide');
    const whole = await connect(key);
    const listed = await connect(key, '?keys=usd_free,coin_emami,eur_free');
    const outside = await connect(key, '?keys=gold_18k');
    assert.deepEqual(keysOf(listed.events[0]!), ['usd_free', 'coin_emami', 'eur_free']);
    assert.ok(keysOf(whole.events[0]!).length >= 4, 'the whole catalogue, as far as the source fills it');

    await cliOk(cliEnv, ['accounts', 'set', 'narrowed', '--plan', 'narrow']);
    const changedAt = Date.now();
    for (const stream of [whole, listed]) {
      const { event, at } = await untilEvent(stream, (e) => e.event === 'snapshot', 1, WITHIN_MS + 1000);
      assert.deepEqual(keysOf(event), ['usd_free', 'eur_free']);
      assert.ok(at - changedAt <= WITHIN_MS, `narrowed ${at - changedAt} ms after the CLI returned`);
      t.diagnostic(`narrowed ${at - changedAt} ms after the CLI returned`);
    }
    assert.equal(envelopeOf(await outside.end(WITHIN_MS + 1000)).error, 'REFERENCE_NOT_IN_PLAN');

    // From now on only the allowed references change on the narrowed streams.
    const seen = listed.events.length;
    writeValues(sourcePath, 3);
    const { event } = await untilEvent(listed, (e) => e.event === 'rates', seen);
    assert.deepEqual(ratesOf(event).rates.map((rate) => rate.key).sort(), ['eur_free', 'usd_free']);
    assert.ok(!whole.ended && !listed.ended, '!whole.ended && !listed.ended');
  });

  it('a slower refresh interval moves the stream to its tier: a fresh snapshot, then changes only on its boundaries', async () => {
    const { key } = await keyFor('paced', 'wide');
    const stream = await connect(key, '?keys=usd_free');
    await cliOk(cliEnv, ['accounts', 'set', 'paced', '--refresh-interval', '3']);
    await untilEvent(stream, (e) => e.event === 'snapshot', 1, WITHIN_MS + 1000);
    // Written at least 1.5 s before a 3 s boundary: the live tier would have it within a few hundred ms, the 3 s tier at the boundary.
    // And at least 0.5 s after the last boundary, so a change that was pending at that boundary (an earlier test's write) has
    // already arrived and is not taken for this one.
    while (Date.now() % 3000 > 1500 || Date.now() % 3000 < 500) await new Promise((resolve) => setTimeout(resolve, 20));
    const written = Date.now();
    writeValues(sourcePath, 4);
    const { at } = await untilEvent(stream, (e) => e.event === 'rates', stream.events.length, 5000);
    const boundary = Math.ceil(written / 3000) * 3000;
    assert.ok(at >= boundary, `the change came ${boundary - at} ms before the tier's boundary`);
    assert.equal(stream.ended, false);
  });

  it('max_stream_seconds: the stream ends with a reconnect event at its lifetime, and a new one opens', async (t) => {
    const { key } = await keyFor('brief', 'brief');
    const openedAt = Date.now();
    const stream = await connect(key, '?keys=usd_free');
    const admittedAt = Date.now();
    const last = await stream.end(BRIEF_SECONDS * 1000 + 3000);
    assert.equal(last?.event, 'reconnect', JSON.stringify(last));
    assert.equal((JSON.parse(last.data) as { reason: string }).reason, 'max_stream_seconds');
    // The server opened the stream between the request and its first event: the lifetime is bounded from both sides.
    const lived = stream.endedAt! - openedAt;
    const livedSinceAdmitted = stream.endedAt! - admittedAt;
    // Never longer than the lifetime; up to a tenth early (streams opened together spread their reconnects), and a check interval.
    assert.ok(lived >= BRIEF_SECONDS * 900 - CHECK_MS && livedSinceAdmitted <= BRIEF_SECONDS * 1000 + 100, `lived ${livedSinceAdmitted}–${lived} ms`);
    t.diagnostic(`lived ${lived} ms (max_stream_seconds ${BRIEF_SECONDS})`);
    await connect(key, '?keys=usd_free');
  });

  it('counts the streams it ended, and those it narrowed, in /metrics', async () => {
    const metrics = (await get(server.base, '/metrics')).text;
    assert.match(metrics, /^nerkh_stream_ended_total\{reason="refused"\} 7$/m);
    assert.match(metrics, /^nerkh_stream_ended_total\{reason="lifetime"\} [1-9]\d*$/m);
    assert.match(metrics, /^nerkh_stream_reselected_total 3$/m);
  });
});
