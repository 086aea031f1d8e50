import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets, type Interval } from '../../src/history/ranges/buckets.js';

const HOUR = 3_600_000;

function bucketsIn(zone: string) {
  const time = new ZoneTime(zone);
  const buckets = new Buckets(time);
  /** The candle of `iso` for `interval`, as [start, end] in the zone's own notation. */
  const candle = (iso: string, interval: Interval) => {
    const start = buckets.start(Date.parse(iso), interval);
    return [time.format(start), time.format(buckets.next(start, interval))];
  };
  return { time, buckets, candle };
}

describe('candle boundaries in the configured zone', () => {
  it('start on the zone’s hours, at local midnight and on Saturday in Tehran (+03:30)', () => {
    const { candle } = bucketsIn('Asia/Tehran');
    const at = '2026-11-21T10:33:20Z'; // 14:03:20 in Tehran, a Saturday
    assert.deepEqual(candle(at, '1m'), ['2026-11-21T14:03:00+03:30', '2026-11-21T14:04:00+03:30']);
    assert.deepEqual(candle(at, '5m'), ['2026-11-21T14:00:00+03:30', '2026-11-21T14:05:00+03:30']);
    assert.deepEqual(candle(at, '15m'), ['2026-11-21T14:00:00+03:30', '2026-11-21T14:15:00+03:30']);
    assert.deepEqual(candle(at, '1h'), ['2026-11-21T14:00:00+03:30', '2026-11-21T15:00:00+03:30']);
    assert.deepEqual(candle(at, '4h'), ['2026-11-21T12:00:00+03:30', '2026-11-21T16:00:00+03:30']);
    assert.deepEqual(candle(at, '1d'), ['2026-11-21T00:00:00+03:30', '2026-11-22T00:00:00+03:30']);
    assert.deepEqual(candle(at, '1w'), ['2026-11-21T00:00:00+03:30', '2026-11-28T00:00:00+03:30']);
    // A second before local midnight is still the day (and the week) before.
    assert.deepEqual(candle('2026-11-20T20:29:59Z', '1d'), ['2026-11-20T00:00:00+03:30', '2026-11-21T00:00:00+03:30']);
    assert.deepEqual(candle('2026-11-20T20:29:59Z', '1w'), ['2026-11-14T00:00:00+03:30', '2026-11-21T00:00:00+03:30']);
  });

  it('stretch and shrink across daylight saving, from one local boundary to the next (New York)', () => {
    const { candle, buckets } = bucketsIn('America/New_York');
    // 8 March 2026: 02:00 EST becomes 03:00 EDT; the day has 23 hours.
    assert.deepEqual(candle('2026-03-08T07:30:00Z', '1h'), ['2026-03-08T03:00:00-04:00', '2026-03-08T04:00:00-04:00']);
    assert.deepEqual(candle('2026-03-08T07:30:00Z', '4h'), ['2026-03-08T00:00:00-05:00', '2026-03-08T04:00:00-04:00']);
    assert.deepEqual(candle('2026-03-08T12:00:00Z', '1d'), ['2026-03-08T00:00:00-05:00', '2026-03-09T00:00:00-04:00']);
    // 1 November 2026: 02:00 EDT becomes 01:00 EST; 01:00-02:00 comes twice and the day has 25 hours.
    assert.deepEqual(candle('2026-11-01T05:30:00Z', '1h'), ['2026-11-01T01:00:00-04:00', '2026-11-01T01:00:00-05:00']);
    assert.deepEqual(candle('2026-11-01T06:30:00Z', '1h'), ['2026-11-01T01:00:00-05:00', '2026-11-01T02:00:00-05:00']);
    assert.deepEqual(candle('2026-11-01T06:30:00Z', '4h'), ['2026-11-01T00:00:00-04:00', '2026-11-01T04:00:00-05:00']);
    const day = candle('2026-11-01T12:00:00Z', '1d');
    assert.deepEqual(day, ['2026-11-01T00:00:00-04:00', '2026-11-02T00:00:00-05:00']);
    assert.equal(Date.parse(day[1]!) - Date.parse(day[0]!), 25 * HOUR);
    // Counting candles across the long day: 25 hourly candles, one daily.
    const start = Date.parse('2026-11-01T04:00:00Z');
    assert.equal(buckets.count(start, start + 25 * HOUR, '1h', 1000), 25);
    assert.equal(buckets.count(start, start + 25 * HOUR, '1d', 1000), 1);
  });

  it('start a day where local midnight does not exist at its first instant (Santiago)', () => {
    const { candle } = bucketsIn('America/Santiago');
    // 6 September 2026: 00:00 -04:00 becomes 01:00 -03:00.
    assert.deepEqual(candle('2026-09-06T12:00:00Z', '1d'), ['2026-09-06T01:00:00-03:00', '2026-09-07T00:00:00-03:00']);
    assert.deepEqual(candle('2026-09-05T12:00:00Z', '1d'), ['2026-09-05T00:00:00-04:00', '2026-09-06T01:00:00-03:00']);
  });

  it('steps back and counts candles', () => {
    const { buckets, time } = bucketsIn('Asia/Tehran');
    const start = buckets.start(Date.parse('2026-11-21T10:33:20Z'), '1d');
    assert.equal(time.format(buckets.back(start, '1d', 29)), '2026-10-23T00:00:00+03:30');
    assert.equal(buckets.count(buckets.back(start, '1d', 29), buckets.next(start, '1d'), '1d', 1000), 30);
    assert.equal(buckets.count(start, start + 1001 * 60_000, '1m', 1000), 1001);
    assert.equal(buckets.count(start, start + 5000 * 86_400_000, '1d', 1000), 1001, 'stops counting past the limit');
  });

  it('bucketer agrees with start for times in order', () => {
    const { buckets } = bucketsIn('America/New_York');
    for (const interval of ['5m', '1h', '4h', '1d', '1w'] as const) {
      const of = buckets.bucketer(interval);
      for (let at = Date.parse('2026-10-30T00:00:00Z'); at < Date.parse('2026-11-10T00:00:00Z'); at += 7 * 60_000) assert.equal(of(at), buckets.start(at, interval));
    }
  });
});
