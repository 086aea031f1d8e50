/**
 * The store goes away under a running server: PostgreSQL ends its
 * connections, then refuses connections for a while; SQLite is locked by another
 * process, fills up, or loses its file. Real processes, real databases, real
 * HTTP. The server must never exit, never answer a 5xx but 503, keep serving
 * rates from memory, say the store is down, and count every request answered
 * (or, when it cannot, say at shutdown how much it lost).
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { ZoneTime } from '../../src/domain/time.js';
import { Store } from '../../src/store/store.js';
import { UsageMeter } from '../../src/usage/meter.js';
import { assertBuilt, cliOk, get, pollUntil, sleep, startServer, type ServerProcess } from '../e2e/helpers.js';
import { needs, POSTGRES_URL } from '../support/services.js';
import { tempDir, writeSource } from '../support/env.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const FLUSH_INTERVAL_MS = 500;
const KEYS = 'usd_free,coin_emami,gold_18k';

/** A config with two file sources holding a few well-known references. */
function writeConfig(dir: string): string {
  mkdirSync(join(dir, 'feeds'), { recursive: true });
  const items = { ir_fx_free_usd: 1_103_125, ir_coin_emami: 1_100_000_000, ir_gold_18k_gram: 106_100_000 };
  writeSource(join(dir, 'feeds', 'alpha.json'), items);
  writeSource(join(dir, 'feeds', 'beta.json'), items);
  const path = join(dir, 'nerkh.config.json');
  writeFileSync(
    path,
    JSON.stringify({
      sources: [
        { name: 'alpha', type: 'file', path: './feeds/alpha.json', max_age_seconds: 3600 },
        { name: 'beta', type: 'file', path: './feeds/beta.json', max_age_seconds: 3600 },
      ],
    }),
  );
  return path;
}

/** What a steady client saw: every answer by status, and when each keyed answer arrived. */
const allTraffic = new Set<Traffic>();
after(async () => {
  for (const traffic of allTraffic) await traffic.stop();
});

class Traffic {
  readonly statuses = new Map<number, number>();
  readonly keyedAnswers: number[] = [];
  readonly badBodies: string[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly base: string,
    private readonly key: string,
    paths: string[],
    concurrency = 3,
    pauseMs = 15,
  ) {
    allTraffic.add(this);
    for (let i = 0; i < concurrency; i++) {
      this.loops.push(
        (async () => {
          for (let n = 0; this.running; n++) {
            const path = paths[(n + i) % paths.length]!;
            try {
              const response = await get(base, path, key, 3000);
              this.statuses.set(response.status, (this.statuses.get(response.status) ?? 0) + 1);
              this.keyedAnswers.push(Date.now());
              if (response.status >= 400 && !isEnvelope(response.json)) this.badBodies.push(`${response.status} ${response.text.slice(0, 200)}`);
            } catch {
              this.statuses.set(0, (this.statuses.get(0) ?? 0) + 1);
            }
            await sleep(pauseMs);
          }
        })(),
      );
    }
  }

  /** A keyed request of the test's own: counted like the traffic's, since usage counts it too. */
  async probe(path: string): Promise<Awaited<ReturnType<typeof get>>> {
    const response = await get(this.base, path, this.key, 3000);
    this.keyedAnswers.push(Date.now());
    return response;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    allTraffic.delete(this);
  }

  count(predicate: (status: number) => boolean): number {
    let sum = 0;
    for (const [status, n] of this.statuses) if (predicate(status)) sum += n;
    return sum;
  }
}

function isEnvelope(body: unknown): boolean {
  const b = body as Record<string, unknown> | undefined;
  return !!b && b.success === false && b.status === 'error' && typeof b.error === 'string' && typeof b.message === 'string' && typeof b.request_id === 'string';
}

async function metric(base: string, name: string): Promise<number> {
  const text = (await get(base, '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

assertBuilt();

describe('PostgreSQL goes away under a running server', needs('postgres'), () => {
  const admin = new pg.Pool({ connectionString: POSTGRES_URL ?? undefined, max: 1 });
  const database = `nerkh_fault_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const target = new URL(POSTGRES_URL ?? 'postgres://127.0.0.1:5432/test');
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  const dir = tempDir('nerkh-fault-pg-');
  let directUrl: string;
  let proxiedUrl: string;
  let configPath: string;
  let key: string;
  let accountId: string;
  let server: ServerProcess | null = null;

  const env = (url: string) => ({ NERKH_DATABASE_URL: url, NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'var'), NERKH_LOG_LEVEL: 'warn' });

  before(async () => {
    await admin.query(`create database ${database}`);
    const direct = new URL(POSTGRES_URL!);
    direct.pathname = `/${database}`;
    directUrl = direct.toString();
    const port = await proxy.start();
    const proxied = new URL(directUrl);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(port);
    proxiedUrl = proxied.toString();
    configPath = writeConfig(dir.path);
    await cliOk(env(directUrl), ['accounts', 'add', 'faulty', '--plan', 'enterprise']);
    key = (await cliOk(env(directUrl), ['keys', 'issue', 'faulty'])).stdout.match(/nrk_[0-9A-Za-z]{32}/)![0];
    const store = await Store.open({ databaseUrl: directUrl, dataDir: dir.path });
    accountId = (await store.accounts.find('faulty'))!.id;
    await store.close();
  });

  after(async () => {
    await server?.kill();
    await proxy.stop();
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [database]).catch(() => {});
    await admin.query(`drop database if exists ${database}`);
    await admin.end();
    dir.cleanup();
  });

  async function usageTotal(): Promise<number> {
    const store = await Store.open({ databaseUrl: directUrl, dataDir: dir.path });
    try {
      const { ok, errors } = await store.usage.total(accountId);
      return ok + errors;
    } finally {
      await store.close();
    }
  }

  it('survives terminated connections and a long refusal, says so, and counts every request answered (SIGTERM)', async (t) => {
    const before = await usageTotal();
    server = await startServer(env(proxiedUrl));
    // The usage report too: it reads the store, so while the store is away it must say 503, never 500.
    const traffic = new Traffic(server.base, key, [`/v1/rates/${KEYS}`, '/v1/rates?category=coin', '/v1/status', '/v1/usage?days=1']);
    // Usage written by the server: its pool holds connections to the database.
    await pollUntil(usageTotal, (total) => total > before, 5000, 100);

    // 1. PostgreSQL ends every connection of this database (a restart, a failover, an admin).
    const killed = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [database]);
    assert.ok(killed.rowCount! >= 1, 'the server held at least one connection');
    // Usage written again after the kill: the server has met its dead connections and opened new ones.
    const atKill = await usageTotal();
    await pollUntil(usageTotal, (total) => total > atKill, 5000, 100);
    assert.ok(server.running, `the process must survive terminated connections\n${server.output()}`);

    // 2. The database refuses connections, for as long as it takes the server to buffer 300 requests' usage.
    await proxy.stop();
    const readyDown = await pollUntil(() => get(server!.base, '/readyz'), (r) => r.status === 503, 4000);
    assert.equal((readyDown.value.json as { error: string }).error, 'SERVICE_UNAVAILABLE');
    const status = await pollUntil(
      () => traffic.probe('/v1/status'),
      (r) => (r.json as { store?: { state: string; error: string } }).store?.error === 'connection refused',
      4000,
    );
    const body = status.value.json as { service: { state: string; message: string }; store: { error: string }; endpoints: { name: string; state: string }[]; history: { state: string } };
    assert.equal(body.service.state, 'degraded');
    assert.match(body.service.message, /store down/);
    assert.equal(body.store.error, 'connection refused');
    assert.equal(body.endpoints.find((e) => e.name === 'usage')?.state, 'degraded');
    assert.equal(body.endpoints.find((e) => e.name === 'history')?.state, 'down', 'history queries need the store');
    assert.equal(body.history.state, 'down');
    const detail = await traffic.probe(`/v1/rates/${KEYS}`);
    assert.equal(detail.status, 200, 'rates are still served from memory');
    assert.equal((detail.json as { rates: { value: number }[] }).rates[0]!.value, 1_103_125);
    assert.equal(await metric(server.base, 'nerkh_store_up'), 0);
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const usage = await traffic.probe('/v1/usage?days=7');
      assert.equal(usage.status, 503, usage.text);
      assert.ok(isEnvelope(usage.json), usage.text);
      assert.equal((usage.json as { error: string }).error, 'SERVICE_UNAVAILABLE');
      assert.equal(usage.headers.get('retry-after'), '1');
      assert.ok(Date.now() - started < 1000, `answered at once, not after a connection timeout (${Date.now() - started} ms)`);
    }
    assert.ok((await metric(server.base, 'nerkh_usage_pending_requests')) > 0, 'usage is buffered while the store is away');
    // The outage lasts until the server has served and buffered 300 requests through it (several seconds of
    // traffic: many store checks and flush intervals refused), not for a fixed time.
    await pollUntil(() => metric(server!.base, 'nerkh_usage_pending_requests'), (n) => n >= 300, 10_000, 100);
    assert.ok(server.running, `the process must survive a refusing database\n${server.output()}`);

    // 3. It comes back: everything resumes by itself.
    await proxy.start();
    await pollUntil(() => get(server!.base, '/readyz'), (r) => r.status === 200, 5000);
    await pollUntil(() => metric(server!.base, 'nerkh_usage_pending_requests'), (n) => n < 50, 5000);
    assert.equal(await metric(server.base, 'nerkh_usage_dropped_requests'), 0);
    // Some traffic after the return, counted like the rest.
    const backAt = traffic.keyedAnswers.length;
    await pollUntil(async () => traffic.keyedAnswers.length, (n) => n >= backAt + 30, 5000, 20);
    await traffic.stop();

    const { exit } = await server.stop('SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null }, server.output());
    const answered = traffic.keyedAnswers.length;
    const fiveXX = traffic.count((s) => s >= 500 && s !== 503);
    assert.equal(fiveXX, 0, `no 5xx but 503: ${JSON.stringify([...traffic.statuses])}`);
    assert.equal(traffic.count((s) => s === 0), 0, 'no request went unanswered');
    assert.deepEqual(traffic.badBodies, []);
    assert.ok(answered > 300, `enough traffic to mean something: ${answered}`);
    assert.equal((await usageTotal()) - before, answered, 'usage equals the requests answered');
    t.diagnostic(`answered ${answered} keyed requests across the faults; statuses ${JSON.stringify(Object.fromEntries(traffic.statuses))}; usage counted ${answered}`);
  });

  it('loses at most one flush interval of usage to SIGKILL', async (t) => {
    if (!proxy.running) await proxy.start();
    await server?.kill();
    const before = await usageTotal();
    server = await startServer(env(proxiedUrl));
    const traffic = new Traffic(server.base, key, [`/v1/rates/${KEYS}`], 4, 2);
    // Killed once flushes have written a few hundred requests, and a few hundred were answered before the last
    // two flush intervals (what the check below allows to be lost): usage written, and usage in flight.
    await pollUntil(usageTotal, (total) => total - before >= 300 && traffic.keyedAnswers.filter((at) => at <= Date.now() - FLUSH_INTERVAL_MS * 2).length >= 300, 10_000, 100);
    server.child.kill('SIGKILL');
    const killedAt = Date.now();
    await server.exited;
    await traffic.stop();
    const answered = traffic.keyedAnswers.filter((t) => t <= killedAt);
    const counted = (await usageTotal()) - before;
    const lastInterval = answered.filter((t) => t > killedAt - FLUSH_INTERVAL_MS * 2).length;
    assert.ok(counted <= answered.length, `never more than answered: ${counted} > ${answered.length}`);
    t.diagnostic(`SIGKILL: answered ${answered.length}, counted ${counted}, lost ${answered.length - counted}; answered in the last ${FLUSH_INTERVAL_MS * 2} ms: ${lastInterval}`);
    assert.ok(counted >= answered.length - lastInterval, `lost more than the last flush interval: counted ${counted} of ${answered.length}, ${lastInterval} in the last ${FLUSH_INTERVAL_MS * 2} ms`);
  });
});

describe('SQLite in trouble under a running server', () => {
  const dir = tempDir('nerkh-fault-sqlite-');
  let configPath: string;
  let key: string;
  let server: ServerProcess | null = null;
  const dataDir = join(dir.path, 'var');
  const env = () => ({ NERKH_CONFIG: configPath, NERKH_DATA_DIR: dataDir, NERKH_LOG_LEVEL: 'warn' });

  before(async () => {
    configPath = writeConfig(dir.path);
    // Only `serve` creates a store; make it as serve does before the admin commands.
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    await cliOk(env(), ['accounts', 'add', 'lite', '--plan', 'enterprise']);
    key = (await cliOk(env(), ['keys', 'issue', 'lite'])).stdout.match(/nrk_[0-9A-Za-z]{32}/)![0];
  });
  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('keeps serving while another process holds the write lock past the busy timeout, then writes what it buffered', async () => {
    server = await startServer(env());
    const traffic = new Traffic(server.base, key, [`/v1/rates/${KEYS}`, '/v1/rates']);
    await pollUntil(async () => traffic.keyedAnswers.length, (n) => n >= 30, 5000, 20);
    const locker = new Sqlite(join(dataDir, 'nerkh.sqlite'));
    locker.exec('begin exclusive');
    // Held until a flush has waited out its busy timeout on the lock and failed (the server says so), and the
    // server has gone on answering after that: not for a fixed time.
    await pollUntil(async () => server!.output(), (output) => /store unreachable; serving from memory[^\n]*database is locked|database is locked[^\n]*store unreachable; serving from memory/.test(output), 15_000, 50, (o) => o.slice(-1500));
    const lockedAt = traffic.keyedAnswers.length;
    await pollUntil(async () => traffic.keyedAnswers.length, (n) => n >= lockedAt + 30, 5000, 20);
    locker.exec('rollback');
    locker.close();
    assert.ok(server.running, server.output());
    await traffic.stop();
    await pollUntil(() => metric(server!.base, 'nerkh_usage_pending_requests'), (n) => n === 0, 5000);
    const { exit } = await server.stop('SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null }, server.output());
    assert.equal(traffic.count((s) => s >= 500), 0, JSON.stringify([...traffic.statuses]));
    assert.equal(traffic.count((s) => s === 0), 0);
    const store = await Store.open({ databaseUrl: null, dataDir });
    const account = await store.accounts.find('lite');
    const total = await store.usage.total(account!.id);
    await store.close();
    assert.equal(total.ok + total.errors, traffic.keyedAnswers.length, 'every request answered is counted');
  });

  it('says the store is down when its file is removed, keeps serving, and says at shutdown how much usage it lost', async () => {
    server = await startServer(env());
    rmSync(join(dataDir, 'nerkh.sqlite'));
    const ready = await pollUntil(() => get(server!.base, '/readyz'), (r) => r.status === 503, 4000);
    assert.match((ready.value.json as { message: string }).message, /store/);
    const status = (await get(server.base, '/v1/status', key)).json as { store: { state: string; error: string } };
    assert.equal(status.store.state, 'down');
    assert.match(status.store.error, /removed/);
    const detail = await get(server.base, `/v1/rates/${KEYS}`, key);
    assert.equal(detail.status, 200);
    const usage = await get(server.base, '/v1/usage', key);
    assert.equal(usage.status, 503, usage.text);
    assert.equal((usage.json as { error: string }).error, 'SERVICE_UNAVAILABLE');
    // Twelve refusals more, of one error.
    for (let i = 0; i < 12; i++) assert.equal((await get(server.base, '/v1/rates/no_such_reference', key)).status, 404);
    assert.ok(server.running, 'server.running');
    const { exit } = await server.stop('SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null }, server.output());
    // Every keyed request came after the store was known to be away: none of them could be written.
    const lost = server.stdout.split('\n').find((line) => line.includes('usage lost at shutdown'));
    assert.ok(lost, `a line says what was lost\n${server.output()}`);
    const line = JSON.parse(lost) as { level: number; msg: string; lost_requests: number; lost_error_entries: number; lost_errors: number };
    assert.equal(line.level, 50, 'logged as an error');
    // Two entries (usage/SERVICE_UNAVAILABLE and detail/RATE_NOT_FOUND), three if the refusals straddled a minute.
    const entries = line.lost_error_entries;
    assert.ok(entries === 2 || entries === 3, `${entries} entries`);
    assert.deepEqual([line.lost_requests, line.lost_errors], [15, 13]);
    assert.equal(line.msg, `usage lost at shutdown (database file removed or replaced; restart to reopen it): 15 requests not counted, ${entries} error-log entries of 13 failures not logged`);
  });
});

describe('a full SQLite database', () => {
  it('holds usage in memory while writes fail, and writes it once there is room', async () => {
    const dir = tempDir('nerkh-fault-full-');
    const store = await Store.open({ databaseUrl: null, dataDir: dir.path });
    try {
      const time = new ZoneTime('Asia/Tehran');
      const account = await store.accounts.create('full', 'pro');
      const keyId = (await store.keys.issue(account.id)).id;
      const meter = new UsageMeter(store.usage, store.keys, time, store.health);
      // What a full disk looks like to SQLite: no page may be added.
      const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(store.connection.db)).rows[0]!.page_count);
      await sql.raw(`pragma max_page_count = ${pages}`).execute(store.connection.db);
      // Failures a minute apart, so that each is an error-log entry of its own (repeats within a minute fold into one).
      const start = Date.now();
      for (let i = 0; i < 2000; i++) meter.record(account.id, keyId, 'detail', start + i * 30_000, i % 2 ? null : { status: 404, error: 'RATE_NOT_FOUND', path: `/v1/rates/${'x'.repeat(200)}${i}` });
      await meter.flush();
      assert.equal(store.health.reachable, false);
      assert.equal(store.health.state.error, 'disk or database is full');
      assert.equal(meter.backlog().pendingRequests, 2000);
      await sql.raw(`pragma max_page_count = 1073741823`).execute(store.connection.db);
      assert.equal(await store.ping(), true);
      await meter.flush();
      assert.deepEqual(await store.usage.total(account.id), { ok: 1000, errors: 1000 });
      assert.equal(meter.backlog().pendingRequests, 0);
    } finally {
      await store.close();
      dir.cleanup();
    }
  });
});
