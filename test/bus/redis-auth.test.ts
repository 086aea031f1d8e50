/**
 * A Redis that requires a password (`requirepass`, as the compose file runs
 * it): NERKH_REDIS_URL carries it, and every shared part goes through it. A
 * URL without it, or with a wrong one, is Redis being away: said so on the
 * status page and in the log, and the password is in neither.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { startRuntime, type Runtime } from '../../src/runtime/wiring.js';
import { eventually, tempDir, testConfig } from '../support/env.js';
import { OwnRedis, randomPrefix } from '../support/redis.js';
import { needs } from '../support/services.js';

interface Status {
  redis: { state: string } | null;
  nodes: { leader: boolean }[];
  service: { state: string; message: string };
}

describe('Redis with a password, reached through NERKH_REDIS_URL', needs('redis'), () => {
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const dir = tempDir('nerkh-redis-auth-');
  let server: OwnRedis;
  let runtime: Runtime | null = null;

  before(async () => {
    server = await OwnRedis.create({ password });
    await server.start();
  });
  afterEach(async () => {
    await runtime?.close();
    runtime = null;
  });
  after(async () => {
    await server.stop();
    dir.cleanup();
  });

  /** A node on SQLite sharing through `url`, logging into `lines`; a key on enterprise, and one on a plan of 3 requests a minute. */
  async function node(url: string, lines: string[] = []): Promise<{ runtime: Runtime; key: string; limitedKey: string; prefix: string }> {
    const prefix = randomPrefix();
    const config = testConfig(join(dir.path, prefix.replaceAll(':', '-')), {
      redisUrl: url,
      redisPrefix: prefix,
      plans: { limited: { services: ['detail'], requests_per_minute: 3, requests_per_day: null, refresh_interval_seconds: 0 } },
    });
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    runtime = await startRuntime(config, { logger });
    const { key } = await runtime.store.keys.issue((await runtime.store.accounts.create('reader', 'enterprise')).id);
    const { key: limitedKey } = await runtime.store.keys.issue((await runtime.store.accounts.create('limited', 'limited')).id);
    await runtime.directory!.load();
    return { runtime, key, limitedKey, prefix };
  }

  const status = async (target: Runtime, key: string) => JSON.parse((await target.app.inject({ url: '/v1/status', headers: { 'x-api-key': key } })).body) as Status;

  it('with the password in the URL, the lease, the snapshot bus and the shared limits all go through it', async () => {
    const { runtime, key, limitedKey, prefix } = await node(server.url);
    const shown = (await eventually(async () => {
      const s = await status(runtime, key);
      return s.redis?.state === 'active' && s.nodes.some((n) => n.leader) ? s : null;
    }, 5000))!;
    assert.equal(shown.nodes.length, 1);
    const raw = new Redis(server.url);
    try {
      // The leader publishes its first snapshot a moment after it takes the lease.
      assert.ok(await eventually(() => raw.get(`${prefix}snapshot:latest`)), 'the snapshot went through Redis');
      assert.ok(await raw.get(`${prefix}leader:lease`), 'the lease is held in Redis');
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push((await runtime.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': limitedKey } })).statusCode);
      // 3 a minute, plus the one request of credit a lone node may admit before its first exchange.
      const admitted = answers.filter((code) => code === 200).length;
      assert.ok(admitted >= 3 && admitted <= 4, `answers ${answers.join()}`);
      const counters = await raw.keys(`${prefix}rl:*:m:*`);
      assert.ok(counters.length > 0, 'the limit was counted in Redis');
    } finally {
      raw.disconnect();
    }
  });

  for (const [what, url] of [
    ['without the password', () => `redis://127.0.0.1:${server.port}`],
    ['with a wrong password', () => `redis://:not-${password}@127.0.0.1:${server.port}`],
  ] as const) {
    it(`${what}, Redis is away: the status page and the log say so, and neither holds a password`, async () => {
      const lines: string[] = [];
      const { runtime, key } = await node(url(), lines);
      const shown = await status(runtime, key);
      assert.equal(shown.redis?.state, 'down');
      assert.equal(shown.service.state === 'active', false, shown.service.message);
      await eventually(() => lines.some((line) => /redis unreachable/.test(line)), 3000);
      const said = lines.find((line) => /redis unreachable/.test(line))!;
      assert.match(said, /NOAUTH|WRONGPASS/, said);
      const page = (await runtime.app.inject({ url: '/v1/status', headers: { 'x-api-key': key } })).body;
      for (const text of [...lines, page]) assert.ok(!text.includes(password), `a password in ${text.slice(0, 200)}`);
    });
  }
});
