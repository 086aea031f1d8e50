import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { rollUp } from '../../src/domain/candle.js';
import { compareDecimal } from '../../src/domain/decimal.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { backfillDemoHistory } from '../../src/demo/backfill.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { createLogger } from '../../src/log.js';
import { dialects } from '../support/harness.js';
import { openFresh } from './fixtures.js';

const DAY = 86_400_000;

for (const dialect of dialects()) {
  describe(`demo history backfill (${dialect.name})`, dialect.options, () => {
    it('gives an empty history a believable past of 30 days, once', async () => {
      const opened = await openFresh(dialect.databaseUrl);
      try {
        const { store } = opened;
        const now = Date.parse('2026-11-21T10:33:20Z');
        const time = new ZoneTime('Asia/Tehran', new ManualClock(now));
        const buckets = new Buckets(time);
        let seed = 1;
        const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
        await backfillDemoHistory(store.history, loadCatalogue(BUNDLED_CATALOGUE), time, createLogger('silent'), { random });

        const days = await store.history.range('day', 'usd_free', 0, now + DAY);
        assert.equal(days.length, 31, '30 days back and today');
        assert.equal(days[0]!.start, buckets.back(buckets.start(now, '1d'), '1d', 30));
        for (const day of days) {
          assert.ok(compareDecimal(day.low, day.open) <= 0 && compareDecimal(day.low, day.close) <= 0 && compareDecimal(day.high, day.open) >= 0 && compareDecimal(day.high, day.close) >= 0, JSON.stringify(day));
          assert.match(day.close, /^\d+$/, 'rial prices in whole rials, as the feeder writes them');
        }
        for (let i = 1; i < days.length; i++) assert.equal(days[i]!.open, days[i - 1]!.close, 'each day opens where the one before closed');
        const closes = days.map((d) => Number(d.close));
        assert.ok(Math.max(...closes) / Math.min(...closes) > 1.005, 'the past moves');

        // Hours for the last week, minutes for the last two hours; where they overlap, rollups equal what is below them.
        const minutes = await store.history.range('minute', 'usd_free', 0, now + DAY);
        assert.equal(minutes.length, 120);
        assert.equal(minutes.at(-1)!.start, buckets.start(now, '1m') - 60_000);
        const hours = await store.history.range('hour', 'usd_free', 0, now + DAY);
        assert.equal(hours[0]!.start, buckets.start(now - 7 * DAY, '1d'));
        const lastHour = hours.at(-1)!;
        assert.deepEqual(rollUp(minutes.filter((m) => m.start >= lastHour.start), () => lastHour.start)[0], lastHour);
        const today = days.at(-1)!;
        assert.deepEqual(rollUp(hours.filter((h) => h.start >= today.start), () => today.start)[0], today);

        const before = await store.history.range('day', 'coin_emami', 0, now + DAY);
        await backfillDemoHistory(store.history, loadCatalogue(BUNDLED_CATALOGUE), time, createLogger('silent'), { random });
        assert.deepEqual(await store.history.range('day', 'coin_emami', 0, now + DAY), before, 'a history with anything in it is left alone');
      } finally {
        await opened.close();
      }
    });
  });
}
