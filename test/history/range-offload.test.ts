import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredCandle } from '../../src/domain/candle.js';
import { ApiError } from '../../src/domain/errors.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { HistoryReader } from '../../src/history/history-reader.js';
import { HistoryRepository } from '../../src/store/candle-tables.js';
import { RangeReadPool, sqliteRangeThreads } from '../../src/history/ranges/read-threads.js';
import { openFresh } from './fixtures.js';

const M = 60_000;
const NOW = Date.parse('2026-11-21T10:30:00Z');
/** Enough minute candles that reading them all takes tens of milliseconds of driver time. */
const CANDLES = 200_000;

describe('history range reads on SQLite run off the event loop', () => {
  let opened: Awaited<ReturnType<typeof openFresh>>;

  before(async () => {
    opened = await openFresh(null, { rangeThreads: sqliteRangeThreads });
    const rows: StoredCandle[] = [];
    for (let i = 0; i < CANDLES; i++) {
      const start = NOW - (CANDLES - i) * M;
      rows.push({ grain: 'minute', reference: 'usd_free', candle: { start, open: '1', high: '2', low: '1', close: String(i), points: 3, source: 'alpha', closeAt: start + 1000 } });
    }
    await opened.store.history.write(rows);
  });
  after(() => opened.close());

  it('lets timers fire while a long range is read, and answers every candle in order', async () => {
    // Warm the pool so thread start-up is not what is measured.
    await opened.store.history.range('minute', 'usd_free', NOW - M, NOW);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const started = performance.now();
    const candles = await opened.store.history.range('minute', 'usd_free', NOW - CANDLES * M, NOW);
    const took = performance.now() - started;
    clearInterval(timer);
    assert.equal(candles.length, CANDLES);
    assert.equal(candles[0]!.close, '0');
    assert.equal(candles.at(-1)!.close, String(CANDLES - 1));
    // A read on this thread would let no timer fire until it ended; off it, the 1 ms timer keeps firing.
    assert.ok(ticks >= 3, `only ${ticks} timer ticks in a ${took.toFixed(0)} ms read`);
  });

  it('fails a read whose worker dies as the worker’s failure: a 503 for the request, the store still reachable, the next read answered', async () => {
    const { store } = opened;
    const pool = new RangeReadPool(store.connection.sqliteFile!);
    const reader = new HistoryReader(new HistoryRepository(store.connection.db, store.connection.sqlite, pool), new Buckets(new ZoneTime('Asia/Tehran')), store.health, 1000);
    try {
      await reader.candles('usd_free', '1m', NOW - M, NOW);
      // The long read is in the worker when it is stopped.
      const reading = reader.candles('usd_free', '1m', NOW - CANDLES * M, NOW);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await Promise.all(pool.threads.map((thread) => thread.terminate()));
      await assert.rejects(reading, (error: unknown) => error instanceof ApiError && error.statusCode === 503 && /worker thread serving it failed/.test(error.message));
      assert.equal(store.health.reachable, true);
      assert.equal((await reader.candles('usd_free', '1m', NOW - 10 * M, NOW)).length, 10);
    } finally {
      await pool.close();
    }
  });

  it('still answers ranges after the store is closed and reopened (the pool closes with the store)', async () => {
    const again = await openFresh(null, { rangeThreads: sqliteRangeThreads });
    try {
      await again.store.history.write([{ grain: 'hour', reference: 'gold', candle: { start: NOW - 3_600_000, open: '5', high: '5', low: '5', close: '5', points: 1, source: 'alpha', closeAt: NOW } }]);
      assert.deepEqual((await again.store.history.range('hour', 'gold', 0, NOW)).map((c) => c.close), ['5']);
    } finally {
      await again.close();
    }
  });
});
