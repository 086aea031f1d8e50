import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Candle } from '../../src/domain/candle.js';
import { ZoneTime } from '../../src/domain/time.js';
import { candleFragment, StartTexts } from '../../src/history/history-reader.js';

const MINUTE = 60_000;

it('renders candle starts by arithmetic exactly as candleFragment does, across midnight and daylight-saving changes', () => {
  // Tehran (no daylight saving, +03:30), New York around both changes of 2026, Lord Howe (a 30-minute change).
  const cases: [string, string, number][] = [
    ['Asia/Tehran', '2026-03-20T18:00:00Z', 15],
    ['America/New_York', '2026-03-08T04:00:00Z', 15],
    ['America/New_York', '2026-11-01T03:00:00Z', 15],
    ['Australia/Lord_Howe', '2026-04-04T13:00:00Z', 1],
  ];
  for (const [zone, from, step] of cases) {
    const time = new ZoneTime(zone);
    const texts = new StartTexts(time);
    for (let start = Date.parse(from), i = 0; i < 600; i++, start += step * MINUTE) {
      const candle: Candle = { start, open: '1.50', high: '123456789012345678', low: '1', close: '2', points: 3, source: 'alpha', closeAt: start };
      assert.equal(texts.fragment(candle), candleFragment(candle, time), `${zone} ${new Date(start).toISOString()}`);
    }
  }
});
