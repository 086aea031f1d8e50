/**
 * Change notices wired end to end (docs/api.md#accounts-and-keys: account and key changes apply
 * on every node within 500 ms): two nodes on one PostgreSQL schema and one
 * Redis prefix, their store polls slowed to a minute so only the notice can
 * tell them, and the admin command's own announcement.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { announce } from '../../src/cli/announce.js';
import type { AppConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime/wiring.js';
import { tempDir, testConfig, writeSource } from '../support/env.js';
import { randomPrefix, removePrefix, silent } from '../support/redis.js';
import { needs, POSTGRES_URL, REDIS_URL } from '../support/services.js';
import { openStream } from '../stream/sse-client.js';


describe('change notices reach every node', needs('postgres', 'redis'), () => {
  const dir = tempDir('nerkh-notices-');
  const prefix = randomPrefix();
  const schema = `nerkh_t_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  let config: AppConfig;
  const nodes: Runtime[] = [];

  before(async () => {
    config = testConfig(dir.path, { databaseUrl: POSTGRES_URL, redisUrl: REDIS_URL, redisPrefix: prefix });
    for (const source of config.sources) writeSource(source.path!, { ir_fx_free_usd: 1_000_001 });
    for (let i = 0; i < 2; i++) nodes.push(await startRuntime(config, { schema, logger: silent, directoryPollMs: 60_000 }));
    // As a listening server is: ready before its first request.
    for (const node of nodes) await node.app.ready();
  });

  after(async () => {
    await nodes[1]?.close();
    await nodes[0]?.close({ dropSchema: true });
    await removePrefix(REDIS_URL!, prefix);
    dir.cleanup();
  });

  /** The status of GET /v1/rates/usd_free with `key` on every node, until each is `expected` (at most `withinMs`). */
  async function untilEveryNode(key: string, expected: number, withinMs: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const statuses = await Promise.all(nodes.map(async (node) => (await node.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } })).statusCode));
      if (statuses.every((status) => status === expected)) return Date.now() - started;
      if (Date.now() - started > withinMs) assert.fail(`after ${withinMs} ms the nodes answer ${statuses.join(', ')}, not ${expected}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('a key issued, and then revoked, in another process applies on both nodes within 500 ms of its notice', async () => {
    const store = nodes[0]!.store;
    const account = await store.accounts.create('noticed', 'enterprise');
    const issued = await store.keys.issue(account.id);
    await announce(config, new Set(['keys']));
    await untilEveryNode(issued.key, 200, 500);

    await store.keys.revoke(issued.id);
    await announce(config, new Set(['keys']));
    await untilEveryNode(issued.key, 401, 500);
  });

  it('a stream open on the other node ends within 500 ms of the notice that its key was revoked', async () => {
    const store = nodes[0]!.store;
    const account = await store.accounts.create('streaming', 'enterprise');
    const issued = await store.keys.issue(account.id);
    await announce(config, new Set(['keys']));
    await untilEveryNode(issued.key, 200, 500);
    const base = await nodes[1]!.app.listen({ port: 0, host: '127.0.0.1' });
    const stream = await openStream(base, '/v1/stream?keys=usd_free', { 'x-api-key': issued.key });
    try {
      assert.equal(stream.status, 200, stream.body);
      await stream.event(0);
      await store.keys.revoke(issued.id);
      // Timed from the notice, not from announce's own connection to Redis.
      await announce(config, new Set(['keys']));
      const revoked = Date.now();
      const last = await stream.end(1000);
      assert.equal(last?.event, 'error');
      assert.equal((JSON.parse(last.data) as { error: string }).error, 'API_KEY_INVALID');
      assert.ok(stream.endedAt! - revoked <= 500, `ended ${stream.endedAt! - revoked} ms after the revocation`);
    } finally {
      stream.close();
    }
  });

  it('an account suspended applies everywhere within 500 ms of its notice', async () => {
    const store = nodes[1]!.store;
    const account = await store.accounts.create('suspended', 'enterprise');
    const issued = await store.keys.issue(account.id);
    await announce(config, new Set(['accounts']));
    await untilEveryNode(issued.key, 200, 500);
    await store.accounts.update('suspended', { status: 'suspended' });
    await announce(config, new Set(['accounts']));
    await untilEveryNode(issued.key, 403, 500);
  });
});
