import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { NO_DAY_FIELDS, type Rate } from '../../src/domain/rate.js';
import { ZoneTime } from '../../src/domain/time.js';
import type { DaySeed } from '../../src/live/market-day.js';
import { prepareRate } from '../../src/live/prepare.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { withSharedDays } from '../../src/roles/ingest.js';

/** 14:00 in Tehran on 1 Azar 1405 (22 November 2026). */
const NOW = Date.parse('2026-11-22T10:30:00Z');
const time = new ZoneTime('Asia/Tehran', new ManualClock(NOW));

function rate(key: string, value: string | null, day: Partial<Rate>): Rate {
  return { key, title: key, value, unit: 'IRR', source_key: key, updated_at: value === null ? null : NOW - 1000, status: value === null ? 'unavailable' : 'ok', source: value === null ? null : 'alpha', ...NO_DAY_FIELDS, ...day };
}

function snapshotOf(rates: Rate[], builtAt = NOW): Snapshot {
  const prepared = new Map<string, PreparedRate>(rates.map((r) => [r.key, prepareRate(r, time)]));
  return { version: 9, builtAt, rates: prepared, lastUpdate: NOW - 1000, counts: { ok: rates.length, stale: 0, unavailable: 0 } };
}

const seed = (day: string, open: string, close: string, prevClose: string | null = null): DaySeed => ({ day, open, high: close, low: open, close, prevClose });

describe('a new ingest leader continues the market day', () => {
  it('takes the last shared snapshot’s open, high, low and previous close over the stored candles of the same day', () => {
    const stored = new Map([['usd', seed('2026-11-22', '100', '101', '90')]]);
    const shared = snapshotOf([rate('usd', '105', { day_open: '99', day_high: '106', day_low: '98', prev_close: '95' })]);
    assert.deepEqual(withSharedDays(stored, shared, time).get('usd'), { day: '2026-11-22', open: '99', high: '106', low: '98', close: '105', prevClose: '95' });
  });

  it('keeps a stored day newer than the snapshot, and references the snapshot has no day for', () => {
    const stored = new Map([
      ['usd', seed('2026-11-23', '110', '111', '105')],
      ['eur', seed('2026-11-22', '200', '201')],
    ]);
    const shared = snapshotOf([rate('usd', '105', { day_open: '99', day_high: '106', day_low: '98', prev_close: '95' }), rate('eur', null, {})]);
    const seeds = withSharedDays(stored, shared, time);
    assert.deepEqual(seeds.get('usd'), stored.get('usd'));
    assert.deepEqual(seeds.get('eur'), stored.get('eur'));
  });

  it('adds the day of a reference the store never recorded', () => {
    const shared = snapshotOf([rate('gold', '5', { day_open: '4', day_high: '6', day_low: '4', prev_close: null })]);
    assert.deepEqual(withSharedDays(new Map(), shared, time).get('gold'), { day: '2026-11-22', open: '4', high: '6', low: '4', close: '5', prevClose: null });
  });
});
