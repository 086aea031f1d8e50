/**
 * The roles apart (docs/operations.md#roles): an `ingest` process that reads the sources
 * and answers only the probes, and an `api` process that serves what it
 * publishes, sharing one PostgreSQL schema and one Redis prefix. The limit
 * that waits on Redis is answered on both HTTP paths.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { AppConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime/wiring.js';
import { eventually, tempDir, testConfig, writeSource } from '../support/env.js';
import { randomPrefix, removePrefix, silent } from '../support/redis.js';
import { needs, POSTGRES_URL, REDIS_URL } from '../support/services.js';


interface Status {
  service: { state: string; message: string };
  nodes: { id: string; role: string; leader: boolean; version: number | null }[];
  redis: { state: string } | null;
  sources: { name: string; state: string }[];
}

describe('an ingest process and an api process', needs('postgres', 'redis'), () => {
  const dir = tempDir('nerkh-roles-');
  const prefix = randomPrefix();
  const schema = `nerkh_t_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  let config: AppConfig;
  let ingest: Runtime;
  let ingestClosed = false;
  let api: Runtime;
  let key: string;
  let limitedKey: string;

  const write = (usd: number) => {
    for (const source of config.sources) writeSource(source.path!, { ir_fx_free_usd: usd + (source.name === 'alpha' ? 0 : 7) });
  };
  const usd = async () => {
    const response = await api.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
    return (JSON.parse(response.body) as { rates: { value: number; source: string }[] }).rates[0]!;
  };
  const status = async (runtime: Runtime) => JSON.parse((await runtime.app.inject({ url: '/v1/status', headers: { 'x-api-key': key } })).body) as Status;

  before(async () => {
    config = testConfig(dir.path, { databaseUrl: POSTGRES_URL, redisUrl: REDIS_URL, redisPrefix: prefix, plans: { limited: { services: ['detail'], requests_per_minute: 5, requests_per_day: null, refresh_interval_seconds: 0 } } });
    write(1_000_000);
    ingest = await startRuntime(config, { role: 'ingest', schema, logger: silent });
    api = await startRuntime(config, { role: 'api', schema, logger: silent });
    const store = api.store;
    key = (await store.keys.issue((await store.accounts.create('reader', 'enterprise')).id)).key;
    limitedKey = (await store.keys.issue((await store.accounts.create('limited', 'limited')).id)).key;
    await eventually(async () => {
      await api.directory!.poll();
      return api.directory!.keyCount === 2;
    });
  });

  after(async () => {
    if (!ingestClosed) await ingest?.close();
    await api?.close({ dropSchema: true });
    await removePrefix(REDIS_URL!, prefix);
    dir.cleanup();
  });

  it('the api process serves what the ingest leader reads, and both list themselves', async () => {
    assert.equal((await usd()).value, 1_000_000);
    write(1_000_500);
    await eventually(async () => (await usd()).value === 1_000_500, 3000);
    const shown = (await eventually(async () => {
      const s = await status(api);
      return s.nodes.length === 2 && s.nodes.some((n) => n.leader) ? s : null;
    }, 3000))!;
    assert.deepEqual(shown.nodes.map((n) => [n.role, n.leader]).sort(), [['api', false], ['ingest', true]]);
    assert.deepEqual(shown.sources.map((s) => [s.name, s.state]), [['alpha', 'active'], ['beta', 'active']], 'the leader’s view of its sources');
    assert.equal(shown.redis?.state, 'active');
    assert.equal(shown.service.state, 'active', shown.service.message);
  });

  it('garbage on the snapshot channel is refused and counted: the api process serves only what the leader built', async () => {
    const served = await usd();
    const raw = new Redis(REDIS_URL!);
    try {
      const latest = await raw.get(`${prefix}snapshot:latest`);
      assert.ok(latest, 'the leader keeps its latest snapshot in Redis');
      // Newer than anything served, with a value that would break the JSON it is pasted into.
      const wire = JSON.parse(latest) as { version: number; rates: { key: string; value: string | null }[] };
      wire.version += 1000;
      wire.rates.find((r) => r.key === 'usd_free')!.value = '999}';
      await raw.publish(`${prefix}snapshots`, JSON.stringify(wire));
      await raw.publish(`${prefix}snapshots`, `{"version":${wire.version + 1},"format":1,"rates":"none"}`);
    } finally {
      raw.disconnect();
    }
    const metrics = async () => (await api.app.inject({ url: '/metrics' })).body;
    await eventually(async () => /^nerkh_snapshots_refused_total 2$/m.test(await metrics()), 3000);
    const response = await api.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200);
    assert.deepEqual((JSON.parse(response.body) as { rates: unknown[] }).rates[0], served, 'valid JSON, the value the leader read');
    // The leader's next snapshot still gets through: nothing refused moved the version on.
    write(1_000_700);
    await eventually(async () => (await usd()).value === 1_000_700, 3000);
  });

  it('the ingest process answers the probes and nothing keyed', async () => {
    assert.equal((await ingest.app.inject({ url: '/readyz' })).statusCode, 200);
    assert.equal((await ingest.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } })).statusCode, 404);
    assert.equal(ingest.directory, null);
    assert.match((await ingest.app.inject({ url: '/metrics' })).body, /^nerkh_ingest_leader 1$/m);
    assert.match((await api.app.inject({ url: '/metrics' })).body, /^nerkh_ingest_leader 0$/m);
  });

  it('a burst on a fresh key, past its credit, waits for Redis on both paths and is counted right', async () => {
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const address = api.app.server.address() as { port: number };
    // Limit 5, one serving node: a credit of one request, so the second at once waits for the exchange.
    const raw = (path: string) => fetch(`http://127.0.0.1:${address.port}${path}`, { headers: { 'x-api-key': limitedKey } });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => raw(i % 2 === 0 ? '/v1/rates/usd_free' : '/v1/rates/usd_free?unit=rial')));
    const statuses = answers.map((a) => a.status).sort();
    const ok = statuses.filter((s) => s === 200).length;
    // The Fastify path refuses the unknown query parameter (400) after admission, the raw path answers 200.
    const admitted = statuses.filter((s) => s === 200 || s === 400).length;
    assert.ok(admitted >= 5 && admitted <= 6, `admitted ${admitted} of 8 (limit 5 + credit 1): ${statuses.join()}`);
    assert.equal(statuses.filter((s) => s === 429).length, 8 - admitted);
    assert.ok(ok >= 1, 'ok >= 1');
    for (const answer of answers) assert.ok(answer.headers.get('ratelimit'), 'every answer carries the limit headers');
    await Promise.all(answers.map((a) => a.text()));
  });

  it('with the ingest process gone, the api process keeps serving and says no node ingests', async () => {
    const before = await usd();
    ingestClosed = true;
    await ingest.close();
    const shown = (await eventually(async () => {
      const s = await status(api);
      return s.nodes.length === 1 ? s : null;
    }, 3000))!;
    assert.equal(shown.service.state, 'degraded');
    assert.match(shown.service.message, /ingest down/);
    assert.deepEqual(await usd(), before);
  });
});
