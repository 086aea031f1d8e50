import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { rollUp, type Candle } from '../../src/domain/candle.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { HistoryRecorder } from '../../src/history/record/recorder.js';
import { Store } from '../../src/store/store.js';
import { dialects } from '../support/harness.js';
import { needs, POSTGRES_URL } from '../support/services.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { openFresh, snapshotOf, type Served } from './fixtures.js';

const S = 1000;
const M = 60_000;
/** 14:00:00 in Tehran, a Saturday. */
const T0 = Date.parse('2026-11-21T10:30:00Z');
const FOREVER = 10 * 365 * 86_400_000;

function setup(store: Store, at = T0, minuteDays = 90, maxPendingMinutes?: number) {
  const clock = new ManualClock(at);
  const time = new ZoneTime('Asia/Tehran', clock);
  const recorder = new HistoryRecorder(store.history, time, store.health, minuteDays, () => {}, maxPendingMinutes);
  let version = 0;
  /** Serve these values at `at` (the clock moves there). */
  const serve = (at: number, served: Record<string, Served>) => {
    clock.set(at);
    recorder.observe(snapshotOf(++version, at, served, time), at);
  };
  return { clock, time, recorder, serve, buckets: new Buckets(time) };
}

const strip = (candles: Candle[]) => candles.map(({ start, open, high, low, close, points, source }) => ({ start, open, high, low, close, points, source }));

for (const dialect of dialects()) {
  describe(`history recorder (${dialect.name})`, dialect.options, () => {
    let opened: Awaited<ReturnType<typeof openFresh>>;
    before(async () => {
      opened = await openFresh(dialect.databaseUrl);
    });
    after(() => opened.close());

    it('records each minute’s candle exactly as the values served in it, decimals and integers above 2^53 alike', async () => {
      const { store } = opened;
      const { recorder, serve } = setup(store);
      await recorder.load();
      serve(T0 + 5 * S, { usd_free: ['0.1', 'alpha', T0 + 4 * S] });
      serve(T0 + 20 * S, { usd_free: ['123456789012345678', 'alpha', T0 + 19 * S] });
      serve(T0 + 40 * S, { usd_free: ['0.3', 'beta', T0 + 39 * S] });
      serve(T0 + 65 * S, { usd_free: ['1103120725', 'beta', T0 + 64 * S] });
      // The same value, source and time again is the same point served on; a new time is a new point.
      serve(T0 + 70 * S, { usd_free: ['1103120725', 'beta', T0 + 64 * S] });
      serve(T0 + 80 * S, { usd_free: ['1103120725', 'beta', T0 + 79 * S] });
      await recorder.flush();
      const minutes = await store.history.range('minute', 'usd_free', T0, T0 + 10 * M);
      assert.deepEqual(minutes, [
        { start: T0, open: '0.1', high: '123456789012345678', low: '0.1', close: '0.3', points: 3, source: 'beta', closeAt: T0 + 39 * S },
        { start: T0 + M, open: '1103120725', high: '1103120725', low: '1103120725', close: '1103120725', points: 2, source: 'beta', closeAt: T0 + 79 * S },
      ]);
      const hour = await store.history.range('hour', 'usd_free', T0, T0 + 60 * M);
      assert.deepEqual(hour, [{ start: T0, open: '0.1', high: '123456789012345678', low: '0.1', close: '1103120725', points: 5, source: 'beta', closeAt: T0 + 79 * S }]);
    });

    it('keeps hourly and daily candles equal to their minutes, across local midnight', async () => {
      const { store } = opened;
      // 22:30 in Tehran: three hours of values run past midnight into the next day.
      const start = Date.parse('2026-11-22T19:00:00Z');
      const { recorder, serve, buckets } = setup(store, start);
      await recorder.load();
      let price = 5000;
      let seed = 7;
      const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      for (let at = start; at < start + 3 * 3600 * S; at += 7 * S + Math.floor(random() * 20 * S)) {
        price += Math.round((random() - 0.5) * 300) / 100;
        serve(at, { gold_ounce: [price.toFixed(2), random() < 0.8 ? 'alpha' : 'beta', at - S] });
        if (random() < 0.05) await recorder.flush();
      }
      await recorder.flush();
      const minutes = await store.history.range('minute', 'gold_ounce', start - FOREVER, start + FOREVER);
      assert.ok(minutes.length > 150, 'minutes.length > 150');
      const hours = await store.history.range('hour', 'gold_ounce', start - FOREVER, start + FOREVER);
      const days = await store.history.range('day', 'gold_ounce', start - FOREVER, start + FOREVER);
      assert.deepEqual(strip(hours), strip(rollUp(minutes, buckets.bucketer('1h'))));
      assert.deepEqual(strip(days), strip(rollUp(minutes, buckets.bucketer('1d'))));
      assert.equal(days.length, 2, 'the values split at local midnight into two days');
      assert.equal(days[1]!.start, Date.parse('2026-11-22T20:30:00Z'), 'the second day starts at 00:00 +03:30');
    });

    it('opens each day with the value still served at midnight, even when nothing changes', async () => {
      const { store } = opened;
      const { recorder, serve } = setup(store, Date.parse('2026-11-23T20:29:00Z'));
      await recorder.load();
      const served: Record<string, Served> = { coin_emami: ['1100000000', 'alpha', Date.parse('2026-11-23T20:00:00Z')] };
      serve(Date.parse('2026-11-23T20:29:30Z'), served);
      serve(Date.parse('2026-11-23T20:30:02Z'), served); // 00:00:02, the same value
      serve(Date.parse('2026-11-23T20:40:00Z'), served);
      await recorder.flush();
      const day = await store.history.range('day', 'coin_emami', Date.parse('2026-11-23T20:30:00Z'), Date.parse('2026-11-24T20:30:00Z'));
      assert.deepEqual(strip(day), [{ start: Date.parse('2026-11-23T20:30:00Z'), open: '1100000000', high: '1100000000', low: '1100000000', close: '1100000000', points: 1, source: 'alpha' }]);
    });

    it('continues the stored candles after a restart, and records an unchanged value only once', async () => {
      const { store } = opened;
      const base = Date.parse('2026-11-25T10:30:00Z');
      const first = setup(store, base);
      await first.recorder.load();
      first.serve(base + 5 * S, { eur_free: ['1200000', 'alpha', base + 4 * S] });
      first.serve(base + 10 * S, { eur_free: ['1200500', 'alpha', base + 9 * S] });
      await first.recorder.stop();

      const second = setup(store, base + 30 * S);
      const seeds = await second.recorder.load();
      assert.deepEqual(seeds.get('eur_free'), { day: '2026-11-25', open: '1200000', high: '1200500', low: '1200000', close: '1200500', prevClose: null });
      second.serve(base + 31 * S, { eur_free: ['1200500', 'alpha', base + 9 * S] });
      second.serve(base + 40 * S, { eur_free: ['1199000', 'beta', base + 39 * S] });
      await second.recorder.flush();
      const expected = { start: base, open: '1200000', high: '1200500', low: '1199000', close: '1199000', points: 3, source: 'beta' };
      assert.deepEqual(strip(await store.history.range('minute', 'eur_free', base, base + M)), [expected]);
      assert.deepEqual(strip(await store.history.range('hour', 'eur_free', base, base + M)), [expected]);
      assert.deepEqual(strip(await store.history.range('day', 'eur_free', base - 24 * 3600 * S, base + M)), [{ ...expected, start: Date.parse('2026-11-24T20:30:00Z') }]);
    });

    it('records before its load without writing, then continues a past written meanwhile with what it recorded', async () => {
      const { store } = opened;
      // 10:00 in Tehran on the 28th: the day began at 20:30Z the day before, the hour at 06:30Z.
      const day = Date.parse('2026-11-27T20:30:00Z');
      const hour = Date.parse('2026-11-28T06:30:00Z');
      const { recorder, serve } = setup(store, hour + 10 * M);
      serve(hour + 10 * M + 5 * S, { rub_free: ['1300', 'alpha', hour + 10 * M + 4 * S] });
      serve(hour + 10 * M + 20 * S, { rub_free: ['1310', 'alpha', hour + 10 * M + 19 * S] });
      await recorder.flush();
      assert.deepEqual(await store.history.range('day', 'rub_free', day - FOREVER, day + FOREVER), [], 'nothing is written before the load');

      // The past, written through the repository as the demo writes it: yesterday, today so far, this hour so far.
      const past = (start: number, open: string, high: string, low: string, close: string, points: number): Candle => ({ start, open, high, low, close, points, source: 'demo-alpha', closeAt: start + M });
      await store.history.write(
        [
          { grain: 'day', reference: 'rub_free', candle: past(day - 86_400_000, '1200', '1260', '1190', '1250', 40) },
          { grain: 'day', reference: 'rub_free', candle: past(day, '1250', '1320', '1240', '1290', 30) },
          { grain: 'hour', reference: 'rub_free', candle: past(hour, '1280', '1295', '1275', '1290', 10) },
        ],
        true,
      );
      const seeds = await recorder.load();
      assert.deepEqual(seeds.get('rub_free'), { day: '2026-11-28', open: '1250', high: '1320', low: '1240', close: '1310', prevClose: '1250' }, 'the market day: the past’s open and range, then the values recorded');
      await recorder.flush();
      assert.deepEqual(strip(await store.history.range('day', 'rub_free', day, day + 1)), [{ start: day, open: '1250', high: '1320', low: '1240', close: '1310', points: 32, source: 'alpha' }]);
      assert.deepEqual(strip(await store.history.range('hour', 'rub_free', hour, hour + 1)), [{ start: hour, open: '1280', high: '1310', low: '1275', close: '1310', points: 12, source: 'alpha' }]);
      assert.equal((await store.history.range('day', 'rub_free', day - 86_400_000, day - 86_400_000 + 1))[0]!.close, '1250', 'the settled past is left as written');
    });

    it('seeds the market day: today’s candle and the close before it', async () => {
      const { store } = opened;
      const today = Date.parse('2026-11-26T20:30:00Z'); // 00:00 on the 27th
      await store.history.write([
        { grain: 'day', reference: 'aed_free', candle: { start: today - 86_400_000, open: '300', high: '310', low: '290', close: '305.5', points: 9, source: 'alpha', closeAt: today - 1000 } },
        { grain: 'day', reference: 'aed_free', candle: { start: today, open: '305.5', high: '320', low: '301', close: '318', points: 4, source: 'alpha', closeAt: today + 3600_000 } },
        { grain: 'day', reference: 'try_free', candle: { start: today - 3 * 86_400_000, open: '30', high: '31', low: '29', close: '30.5', points: 2, source: 'alpha', closeAt: today - 3 * 86_400_000 } },
      ]);
      const { recorder } = setup(store, today + 4 * 3600_000);
      const seeds = await recorder.load();
      assert.deepEqual(seeds.get('aed_free'), { day: '2026-11-27', open: '305.5', high: '320', low: '301', close: '318', prevClose: '305.5' });
      assert.deepEqual(seeds.get('try_free'), { day: '2026-11-24', open: '30', high: '31', low: '29', close: '30.5', prevClose: null });
    });

    it('drops minute candles past the retention and keeps hourly and daily ones', async () => {
      const { store } = opened;
      const now = Date.parse('2026-12-10T10:30:00Z');
      const old = now - 3 * 86_400_000;
      const candle = { start: old, open: '1', high: '1', low: '1', close: '1', points: 1, source: 'alpha', closeAt: old };
      await store.history.write([
        { grain: 'minute', reference: 'usd_free', candle },
        { grain: 'hour', reference: 'usd_free', candle },
        { grain: 'day', reference: 'usd_free', candle },
      ]);
      const { recorder } = setup(store, now, 2);
      await recorder.load();
      await recorder.flush();
      assert.deepEqual(await store.history.range('minute', 'usd_free', old, old + 1), []);
      assert.equal((await store.history.range('hour', 'usd_free', old, old + 1)).length, 1);
      assert.equal((await store.history.range('day', 'usd_free', old, old + 1)).length, 1);
    });
  });
}

/** What the recorder does while the store refuses writes: hold the candles (bounded), then write them all. */
async function outage(store: Store, breakStore: () => Promise<void>, mendStore: () => Promise<void>) {
  const base = Date.parse('2026-12-01T10:30:00Z');
  const { recorder, serve, buckets } = setup(store, base, 90, 5);
  await recorder.load();
  serve(base, { usd_free: ['1000.5', 'alpha', base] });
  await recorder.flush();
  await breakStore();
  for (let i = 1; i <= 8; i++) serve(base + i * M + S, { usd_free: [`${1000 + i}.25`, 'alpha', base + i * M] });
  await recorder.flush();
  assert.equal(store.health.reachable, false, 'a failed write marks the store down');
  const held = recorder.backlog();
  assert.ok(held.pendingCandles >= 5 + 2, `minute candles (bounded to 5) and the hour and day held: ${JSON.stringify(held)}`);
  assert.equal(held.droppedCandles, 3, 'the three oldest minute candles went over the bound');
  await mendStore();
  assert.equal(await store.ping(), true);
  await recorder.flush();
  assert.deepEqual({ ...recorder.backlog(), busySeconds: 0 }, { pendingCandles: 0, droppedCandles: 3, busySeconds: 0 });
  const minutes = await store.history.range('minute', 'usd_free', base, base + 10 * M);
  assert.deepEqual(
    minutes.map((m) => m.close),
    ['1000.5', '1004.25', '1005.25', '1006.25', '1007.25', '1008.25'],
  );
  // The rollups never lose a value: they are complete although minutes were dropped.
  const hour = await store.history.range('hour', 'usd_free', buckets.start(base, '1h'), base + 10 * M);
  assert.deepEqual(strip(hour), [{ start: buckets.start(base, '1h'), open: '1000.5', high: '1008.25', low: '1000.5', close: '1008.25', points: 9, source: 'alpha' }]);
}

describe('history recorder while the store is away', () => {
  it('SQLite full: holds candles in memory and writes them when there is room', async () => {
    const opened = await openFresh(null);
    try {
      const { store } = opened;
      await outage(
        store,
        async () => {
          // What a full disk looks like to SQLite: no page may be added, and the free room in the pages there are is filled.
          const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(store.connection.db)).rows[0]!.page_count);
          await sql.raw(`pragma max_page_count = ${pages}`).execute(store.connection.db);
          for (let i = 0; ; i++) {
            const filler = { start: i, open: 'x'.repeat(40), high: '1', low: '1', close: '1', points: 1, source: 'x', closeAt: 0 };
            const full = await store.history.write([{ grain: 'minute', reference: 'zz_filler', candle: filler }]).then(() => false, () => true);
            if (full) break;
          }
        },
        async () => {
          await sql.raw(`pragma max_page_count = 1073741823`).execute(store.connection.db);
        },
      );
    } finally {
      await opened.close();
    }
  });

  it('PostgreSQL refusing connections: holds candles in memory and writes them when it answers', needs('postgres'), async () => {
    const target = new URL(POSTGRES_URL!);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const proxied = new URL(POSTGRES_URL!);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(await proxy.start());
    const opened = await openFresh(proxied.toString());
    try {
      await outage(
        opened.store,
        () => proxy.stop(),
        async () => {
          await proxy.start();
        },
      );
    } finally {
      if (!proxy.running) await proxy.start();
      await opened.close();
      await proxy.stop();
    }
  });
});
