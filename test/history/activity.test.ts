import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { ACTIVITY_BUCKET_MS, ACTIVITY_BUCKETS } from '../../src/history/record/activity.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { HistoryReader } from '../../src/history/history-reader.js';
import { eventually } from '../support/env.js';
import { dialects } from '../support/harness.js';
import { openFresh } from './fixtures.js';

const M = 60_000;
/** 14:05 in Tehran: inside a ten-minute bucket that began at 14:00. */
const NOW = Date.parse('2026-11-21T10:35:00Z');

for (const dialect of dialects()) {
  describe(`source activity on a node that does not record (${dialect.name})`, dialect.options, () => {
    let opened: Awaited<ReturnType<typeof openFresh>>;
    before(async () => {
      opened = await openFresh(dialect.databaseUrl);
    });
    after(() => opened.close());

    it('is read from the stored minute candles, in the background, by each candle’s closing source', async () => {
      const { store } = opened;
      const candle = (start: number, points: number, source: string) => ({
        grain: 'minute' as const,
        reference: `r${start}${source}`,
        candle: { start, open: '1', high: '1', low: '1', close: '1', points, source, closeAt: start + 1000 },
      });
      // Two references in the current bucket, one an hour ago, one past the six hours shown.
      await store.history.write([candle(NOW - 2 * M, 3, 'alpha'), candle(NOW - 4 * M, 2, 'alpha'), candle(NOW - 60 * M, 7, 'beta'), candle(NOW - 7 * 60 * M, 9, 'alpha')]);
      const time = new ZoneTime('Asia/Tehran', new ManualClock(NOW));
      const reader = new HistoryReader(store.history, new Buckets(time), store.health, 90, null);

      assert.equal(reader.activity('alpha', NOW), null, 'a page never waits on the store: nothing until the first read lands');
      const alpha = (await eventually(() => reader.activity('alpha', NOW), 3000, 20))!;
      assert.equal(alpha.length, ACTIVITY_BUCKETS);
      assert.equal(alpha[ACTIVITY_BUCKETS - 1], 5, 'both candles of the current ten minutes');
      assert.equal(alpha.reduce((sum, n) => sum + n, 0), 5, 'nothing from before the six hours');
      const beta = reader.activity('beta', NOW)!;
      assert.equal(beta[ACTIVITY_BUCKETS - 1 - (60 * M) / ACTIVITY_BUCKET_MS], 7);
      assert.deepEqual(reader.activity('gamma', NOW), new Array(ACTIVITY_BUCKETS).fill(0));
    });
  });
}
