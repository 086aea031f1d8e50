/**
 * The usage error log under a flood of refusals: real `nerkh
 * serve` processes on real stores (SQLite, PostgreSQL, and two nodes sharing
 * PostgreSQL and Redis). A key spending its limit (429) and a suspended
 * account (403) send 2,000 requests each within a minute; the log must gain
 * one entry per (account, service, error, minute), counting every refusal,
 * and the store must be written once per entry, not once per refusal.
 *
 * Needs `npm run build` first, NERKH_TEST_DATABASE_URL and NERKH_TEST_REDIS_URL.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { Store } from '../../src/store/store.js';
import { minuteOf } from '../../src/store/usage-repository.js';
import { tempDir } from '../support/env.js';
import { freshDatabase, type TestDatabase } from '../support/postgres.js';
import { needs, REDIS_URL } from '../support/services.js';
import { Cluster, startNodes } from './cluster.js';
import { assertBuilt, cliOk, get, minuteStartClock, pollUntil, startServer, type ServerProcess } from './helpers.js';
import { writeUsageConfig } from './usage-rig.js';

assertBuilt();

/** Two services: the detail fast path and a Fastify route, each refused the same way. */
const PATHS: Record<string, string> = { detail: '/v1/rates/usd_free', catalogue: '/v1/rates' };
/** Enough to show the folding (a few entries for hundreds of refusals); how fast a flood is taken is a bench figure. */
const REFUSALS = 200;

interface Entry {
  account_id: string;
  service: string;
  error: string;
  minute: number;
  count: number;
  http_status: number;
}

/** Writes the source and a config with the 5-a-minute plan; returns the config path. */
function writeConfig(dir: string): string {
  return writeUsageConfig(dir, { tiny: { services: ['catalogue', 'detail', 'usage'], requests_per_minute: 5, requests_per_day: null, refresh_interval_seconds: 1 } });
}

/** The two accounts: `spender` on 5 requests a minute, `banned` suspended. Returns their keys and ids. */
async function makeAccounts(store: Store): Promise<{ keys: Record<string, string>; ids: Record<string, string> }> {
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};
  for (const [name, plan] of [['spender', 'tiny'], ['banned', 'enterprise']] as const) {
    const account = await store.accounts.create(name, plan);
    keys[name] = (await store.keys.issue(account.id)).key;
    ids[name] = account.id;
  }
  await store.accounts.update('banned', { status: 'suspended' });
  return { keys, ids };
}

/** `total` requests with `key`, 8 at a time, alternating the services, and the nodes (`bases`) every two; tallies "service status error". */
async function flood(bases: string[], key: string, total: number): Promise<Map<string, number>> {
  const tally = new Map<string, number>();
  let next = 0;
  const services = Object.keys(PATHS);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < total) {
        const n = next++;
        const service = services[n % services.length]!;
        const response = await get(bases[Math.floor(n / services.length) % bases.length]!, PATHS[service]!, key);
        const error = (response.json as { error?: string } | undefined)?.error ?? '-';
        const label = `${service} ${response.status} ${error}`;
        tally.set(label, (tally.get(label) ?? 0) + 1);
      }
    }),
  );
  return tally;
}

/** Every error-log row of the accounts, straight from the table. */
async function entries(store: Store, accountIds: string[]): Promise<Entry[]> {
  const rows = await store.connection.db
    .selectFrom('usage_errors')
    .select(['account_id', 'service', 'error', 'minute', 'count', 'http_status'])
    .where('account_id', 'in', accountIds)
    .orderBy('account_id')
    .orderBy('service')
    .orderBy('minute')
    .execute();
  return rows.map((row) => ({ ...row, minute: Number(row.minute), count: Number(row.count), http_status: Number(row.http_status) }));
}

/** The refusals of one account as the entries the log should hold, in the order `entries()` reads them. */
function expected(accountId: string, tally: Map<string, number>, minute: number): Entry[] {
  const out: Entry[] = [];
  for (const [label, count] of tally) {
    const [service, status, error] = label.split(' ') as [string, string, string];
    if (Number(status) < 400) continue;
    out.push({ account_id: accountId, service, error, minute, count, http_status: Number(status) });
  }
  return out.sort((a, b) => a.service.localeCompare(b.service));
}

/** The application name of the test's own connections to a database, which `tableWrites` does not wait for. */
const TEST_APP = 'nerkh-test-reader';

/** `url` for the test's own store: its connections carry TEST_APP. */
function testUrl(url: string): string {
  const withName = new URL(url);
  withName.searchParams.set('application_name', TEST_APP);
  return withName.toString();
}

/**
 * Rows inserted or updated in `usage_errors` of the database at `url`, as
 * PostgreSQL's statistics count them once the writers have exited: read until
 * it reaches `least`, and until every writer's backend has left
 * pg_stat_activity. A backend reports its statistics as it exits, before it
 * leaves pg_stat_activity (PostgreSQL 15 and later keep them in shared
 * memory), so nothing can be reported late after that: one more read is the
 * final count, with no fixed wait for stragglers.
 */
async function tableWrites(url: string, least: number): Promise<number> {
  await pollUntil(() => readTableWrites(url), (n) => n >= least, 3000);
  await pollUntil(() => writerBackends(url), (n) => n === 0, 5000, 50);
  return readTableWrites(url);
}

/** Backends on `url`'s database other than this query's and the test's own store's. */
async function writerBackends(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name is distinct from $1`, [TEST_APP]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

async function readTableWrites(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ writes: string }>(`select n_tup_ins + n_tup_upd as writes from pg_stat_user_tables where relname = 'usage_errors'`);
    return Number(rows[0]?.writes ?? 0);
  } finally {
    await client.end();
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the usage error log folds a flood of refusals (${dialect}, one process)`, { timeout: 120_000, ...(dialect === 'postgres' ? needs('postgres') : {}) }, () => {
    const dir = tempDir(`nerkh-usage-errors-${dialect}-`);
    let database: TestDatabase | null = null;
    let server: ServerProcess | null = null;
    let env: Record<string, string>;

    before(async () => {
      if (dialect === 'postgres') database = await freshDatabase('usage_errors');
      env = { NERKH_CONFIG: writeConfig(dir.path), NERKH_DATA_DIR: join(dir.path, 'var'), NERKH_LOG_LEVEL: 'warn', ...(database ? { NERKH_DATABASE_URL: database.url } : {}) };
    });
    after(async () => {
      await server?.kill();
      await database?.drop();
      dir.cleanup();
    });

    const openStore = () => Store.open({ databaseUrl: database ? testUrl(database.url) : null, dataDir: join(dir.path, 'var') });

    it(`${REFUSALS} refusals per account within a minute (429 over the limit, 403 suspended): one entry per service and error, every refusal counted, each entry written once`, async (t) => {
      const store = await openStore();
      try {
        const { keys, ids } = await makeAccounts(store);
        // The server's clock starts a minute: the burst and the checks that follow it fall within it.
        const clock = minuteStartClock();
        server = await startServer({ ...env, ...clock.env });
        await pollUntil(() => get(server!.base, '/readyz'), (r) => r.status === 200, 10_000);
        const minute = minuteOf(clock.now());
        const started = Date.now();
        const [spent, suspended] = await Promise.all([flood([server.base], keys.spender!, REFUSALS), flood([server.base], keys.banned!, REFUSALS)]);
        const burstMs = Date.now() - started;

        // What the clients saw: the 5 allowed, then 429 RATE_LIMIT_EXCEEDED; the suspended account 403 SERVICE_NOT_ACTIVE throughout.
        const allowed = (spent.get('detail 200 -') ?? 0) + (spent.get('catalogue 200 -') ?? 0);
        assert.equal(allowed, 5, JSON.stringify([...spent]));
        assert.equal((spent.get('detail 429 RATE_LIMIT_EXCEEDED') ?? 0) + (spent.get('catalogue 429 RATE_LIMIT_EXCEEDED') ?? 0), REFUSALS - 5, JSON.stringify([...spent]));
        assert.deepEqual(Object.fromEntries(suspended), { 'detail 403 SERVICE_NOT_ACTIVE': REFUSALS / 2, 'catalogue 403 SERVICE_NOT_ACTIVE': REFUSALS / 2 });

        // Once a flush has written every request, still within the minute: the log holds nothing of this minute yet
        // (the refusals' counts and any error entry due go out in the same batch, so a per-refusal write would show).
        await pollUntil(() => store.usage.total(ids.spender!), (total) => total.ok + total.errors === REFUSALS, 5000);
        await pollUntil(() => store.usage.total(ids.banned!), (total) => total.ok + total.errors === REFUSALS, 5000);
        assert.equal(minuteOf(clock.now()), minute, `the burst (${burstMs} ms) and this check fit in one minute`);
        assert.deepEqual(await store.usage.total(ids.spender!), { ok: 5, errors: REFUSALS - 5 });
        assert.deepEqual(await store.usage.total(ids.banned!), { ok: 0, errors: REFUSALS });
        assert.deepEqual(await entries(store, [ids.spender!, ids.banned!]), [], 'the running minute is held in memory, not written per refusal');

        // Shutdown writes the running minute: one entry per account, service and error, with every refusal counted.
        const { exit } = await server.stop('SIGTERM');
        assert.deepEqual(exit, { code: 0, signal: null }, server.output());
        assert.doesNotMatch(server.stdout, /usage lost at shutdown/);
        const logged = await entries(store, [ids.spender!, ids.banned!]);
        const want = [...expected(ids.spender!, spent, minute), ...expected(ids.banned!, suspended, minute)].sort((a, b) => a.account_id.localeCompare(b.account_id) || a.service.localeCompare(b.service));
        assert.equal(want.length, 4);
        assert.deepEqual(logged, want);
        if (database) {
          // PostgreSQL counts the rows each statement wrote: four entries, four writes, for 395 refusals.
          assert.equal(await tableWrites(database.url, 4), 4, 'each entry was written once');
        }

        // The CLI shows the same entries, with their counts.
        const report = JSON.parse((await cliOk({ ...process.env, ...env }, ['usage', 'spender', '--days', '1', '--json'])).stdout) as { errors: { service: string; error: string; http_status: number; count: number }[] };
        assert.deepEqual(
          report.errors.map((e) => [e.service, e.error, e.http_status, e.count]).sort(),
          expected(ids.spender!, spent, minute).map((e) => [e.service, e.error, e.http_status, e.count]),
        );
        t.diagnostic(`${dialect}: ${REFUSALS * 2} requests in ${burstMs} ms; ${logged.length} error-log entries: ${logged.map((e) => `${e.service}/${e.error}×${e.count}`).join(', ')}`);
      } finally {
        await store.close();
      }
    });
  });
}

describe('two nodes folding the same minute add up to one entry (PostgreSQL and Redis)', { timeout: 120_000, ...needs('postgres', 'redis') }, () => {
  const cluster = new Cluster('usage_nodes');
  const { nodes } = cluster;

  after(() => cluster.close());

  it(`${REFUSALS} refusals spread over two nodes: one entry per service and error, counting both nodes' refusals`, async (t) => {
    assert.ok(REDIS_URL, 'NERKH_TEST_REDIS_URL must be set: two nodes share their limits through Redis');
    const databaseUrl = await cluster.createDatabase();
    writeConfig(cluster.dir.path);
    const store = await Store.open({ databaseUrl: testUrl(databaseUrl), dataDir: cluster.dir.path });
    try {
      const { keys, ids } = await makeAccounts(store);
      // The nodes' clock starts a minute: the refusals and the shutdown fall within it.
      const clock = minuteStartClock();
      await startNodes(cluster.nodes, (name) => ({ ...cluster.env(name), ...clock.env }), ['a', 'b']);
      const minute = minuteOf(clock.now());
      const spent = await flood(
        nodes.map((node) => node.base),
        keys.spender!,
        REFUSALS,
      );
      const refused = expected(ids.spender!, spent, minute);
      assert.deepEqual(
        refused.map((e) => [e.service, e.error]),
        [
          ['catalogue', 'RATE_LIMIT_EXCEEDED'],
          ['detail', 'RATE_LIMIT_EXCEEDED'],
        ],
        JSON.stringify([...spent]),
      );
      assert.ok(refused.every((e) => e.count >= REFUSALS / 2 - 10), JSON.stringify(refused));
      // One after the other: two upserts racing for a new row may both try an insert, which the statistics would count twice.
      for (const node of nodes) assert.deepEqual((await node.stop('SIGTERM')).exit, { code: 0, signal: null }, node.output());
      assert.equal(minuteOf(clock.now()), minute, 'the refusals and the shutdown fit in one minute');
      // Each node wrote each entry once; the second write of an entry added its count to the first's row.
      assert.deepEqual(await entries(store, [ids.spender!]), refused);
      assert.equal(await tableWrites(databaseUrl, 4), 4, 'two entries, written once by each node');
      t.diagnostic(`two nodes: ${refused.map((e) => `${e.service}/${e.error}×${e.count}`).join(', ')} in one row each`);
    } finally {
      await store.close();
    }
  });
});
