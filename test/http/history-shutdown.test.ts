import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { StoredCandle } from '../../src/domain/candle.js';
import { eventually } from '../support/env.js';
import { startHarness, type Harness } from '../support/harness.js';
import { freshDatabase, type TestDatabase } from '../support/postgres.js';
import { needs, POSTGRES_URL } from '../support/services.js';

const M = 60_000;
/** A reference no test source feeds, so only the seeded history speaks for it. */
const SEEDED = 'gbp_free';
/** What a render thread asks its own connection (the event loop's store asks through Kysely, which quotes the names). */
const RENDER_THREAD_QUERY = 'select start, open, high, low, close, points, source, close_at from history_%';

describe('the history answers’ render threads close their PostgreSQL connections when the app closes', needs('postgres'), () => {
  let database: TestDatabase;
  let admin: pg.Pool;
  let harness: Harness | null = null;

  /** Connections to the test's database now, and those a render thread opened. */
  async function connections(): Promise<{ total: number; renderThreads: number }> {
    const { rows } = await admin.query<{ total: number; render_threads: number }>(
      `select count(*)::int as total, (count(*) filter (where query like $2))::int as render_threads from pg_stat_activity where datname = $1`,
      [database.name, RENDER_THREAD_QUERY],
    );
    return { total: rows[0]!.total, renderThreads: rows[0]!.render_threads };
  }

  /** Sessions of the test's database that ended without the client saying goodbye (its socket dropped). */
  async function abandonedSessions(): Promise<number> {
    await admin.query('select pg_stat_clear_snapshot()');
    const { rows } = await admin.query<{ abandoned: string }>(`select sessions_abandoned as abandoned from pg_stat_database where datname = $1`, [database.name]);
    return Number(rows[0]!.abandoned);
  }

  before(async () => {
    database = await freshDatabase('history_shutdown');
    // On the server's own database, so that the counts above see only what the app opened.
    admin = new pg.Pool({ connectionString: POSTGRES_URL!, max: 1 });
  });
  after(async () => {
    await harness?.close().catch(() => {});
    await admin?.end();
    await database?.drop();
  });

  it('ends each thread’s connection with the protocol’s goodbye, not by dropping its socket', async () => {
    harness = await startHarness({ databaseUrl: database.url });
    const { key } = await harness.keyFor('charts', 'enterprise');
    const now = Math.floor(Date.now() / M) * M;
    const rows: StoredCandle[] = [];
    for (let i = 0; i < 600; i++) {
      const start = now - (600 - i) * M;
      rows.push({ grain: 'minute', reference: SEEDED, candle: { start, open: '1', high: '2', low: '1', close: String(i), points: 1, source: 'alpha', closeAt: start + 1000 } });
    }
    await harness.store.history.write(rows);
    const url = `/v1/rates/${SEEDED}/history?interval=1m&from=${new Date(now - 600 * M).toISOString()}&to=${new Date(now - 1).toISOString()}`;
    const answered = await harness.app.inject({ url, headers: { 'x-api-key': key } });
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal((JSON.parse(answered.body) as { count: number }).count, 600);
    const open = await connections();
    assert.ok(open.renderThreads >= 1, `no render thread reads over a connection of its own (${JSON.stringify(open)})`);
    assert.equal(await abandonedSessions(), 0);

    await harness.close();
    harness = null;

    // Every connection the app opened is gone, and none was left to the server to find dropped (a backend counts
    // its session as it exits, so the count is watched a while after the last one went).
    await eventually(async () => (await connections()).total === 0, 5000);
    for (const until = Date.now() + 1000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 50))) {
      assert.equal(await abandonedSessions(), 0, 'a render thread’s connection was dropped with its thread, not closed');
    }
  });
});
