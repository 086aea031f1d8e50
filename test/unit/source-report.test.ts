import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_DAY_FIELDS, type Rate } from '../../src/domain/rate.js';
import { resolveReference, type SourceView } from '../../src/domain/resolve.js';
import { DEFAULT_SCREENING } from '../../src/domain/screening.js';
import { ZoneTime } from '../../src/domain/time.js';
import type { Snapshot } from '../../src/live/snapshot.js';
import { describeSources, withSources } from '../../src/live/source-report.js';
import { MINUTE, NOW, sourceView, testReference } from './fixtures.js';

const coin = testReference({
  key: 'coin_emami',
  title: 'سکه امامی',
  title_en: 'Emami coin',
  unit: 'ریال/سکه',
  per: 'coin',
  min: 10_000_000,
  max: 10_000_000_000,
  category: 'coin',
  source_key: 'emami',
});

const view = (name: string, raw: string | null, options?: { ageMs?: number; healthy?: boolean }) => sourceView(name, 'emami', raw, options);

/** A snapshot holding only what describeSources reads: the views, states and screening verdicts at the build. */
function snapshotOf(views: SourceView[]): { snapshot: Snapshot; rate: Rate } {
  const { rate: resolved, screened } = resolveReference(coin, views, NOW, undefined, DEFAULT_SCREENING);
  const rate: Rate = { ...resolved, ...NO_DAY_FIELDS };
  const snapshot: Snapshot = {
    version: 1,
    builtAt: NOW,
    rates: new Map(),
    lastUpdate: NOW,
    counts: { ok: 1, stale: 0, unavailable: 0 },
    sources: {
      ordered: new Map([[coin.key, views]]),
      states: new Map(views.map((v) => [v.name, v.healthy ? 'active' : 'degraded'])),
      screened: screened ? new Map([[coin.key, screened]]) : new Map(),
    },
  };
  return { snapshot, rate };
}

describe('describeSources', () => {
  it('names why each value was passed over, in priority order', () => {
    const views = [
      view('broken', '850000001', { healthy: false }),
      view('late', '850000002', { ageMs: 10 * MINUTE }),
      view('absurd', '3'),
      view('silent', null),
      view('good', '850000005'),
      view('also', '850000006'),
    ];
    const { snapshot, rate } = snapshotOf(views);
    assert.equal(rate.source, 'good');
    assert.deepEqual(
      describeSources(coin, rate, snapshot).map((r) => [r.name, r.value, r.state, r.used, r.rejected]),
      [
        ['broken', '850000001', 'degraded', false, 'unhealthy'],
        ['late', '850000002', 'active', false, 'stale'],
        ['absurd', '3', 'active', false, 'out_of_range'],
        ['silent', null, 'active', false, null],
        ['good', '850000005', 'active', true, null],
        ['also', '850000006', 'active', false, null],
      ],
    );
  });

  it('marks the stale value served as used, not rejected, and names outliers', () => {
    const stale = snapshotOf([view('a', '850000001', { ageMs: 10 * MINUTE }), view('b', '850000002', { ageMs: 20 * MINUTE })]);
    assert.deepEqual(describeSources(coin, stale.rate, stale.snapshot).map((r) => [r.name, r.used, r.rejected]), [
      ['a', true, null],
      ['b', false, 'stale'],
    ]);
    const outlier = snapshotOf([view('a', '85000000'), view('b', '850000002'), view('c', '850000003')]);
    assert.deepEqual(describeSources(coin, outlier.rate, outlier.snapshot).map((r) => [r.name, r.used, r.rejected]), [
      ['a', false, 'outlier'],
      ['b', true, null],
      ['c', false, null],
    ]);
  });

  it('names why a source that had the item dropped it, and writes the reason', () => {
    const dropped: SourceView = { ...view('feed', null), dropped: new Map([['emami', 'not_a_number']]) };
    const { snapshot, rate } = snapshotOf([dropped, view('good', '850000005')]);
    const reports = describeSources(coin, rate, snapshot);
    assert.deepEqual(
      reports.map((r) => [r.name, r.value, r.rejected, r.droppedReason]),
      [
        ['feed', null, 'dropped', 'not_a_number'],
        ['good', '850000005', null, null],
      ],
    );
    assert.match(withSources('{"key":"coin_emami"}', rate, reports, new ZoneTime('Asia/Tehran')), /\{"name":"feed","value":null,"updated_at":null,"state":"active","used":false,"rejected":"dropped","dropped_reason":"not_a_number"\}/);
  });

  it('describes nothing for a snapshot built elsewhere', () => {
    const { snapshot, rate } = snapshotOf([view('a', '850000001')]);
    assert.deepEqual(describeSources(coin, rate, { ...snapshot, sources: undefined }), []);
  });

  it('writes the sources into the rate, in toman when the rate is shown in toman', () => {
    const { snapshot, rate } = snapshotOf([view('a', '850000001'), view('b', null)]);
    const reports = describeSources(coin, rate, snapshot);
    const time = new ZoneTime('Asia/Tehran');
    assert.equal(
      withSources('{"key":"coin_emami"}', { ...rate, currency: 'IRT' }, reports, time),
      '{"key":"coin_emami","sources":[{"name":"a","value":85000000.1,"updated_at":"2026-11-21T14:03:07+03:30","state":"active","used":true,"rejected":null,"dropped_reason":null},' +
        '{"name":"b","value":null,"updated_at":null,"state":"active","used":false,"rejected":null,"dropped_reason":null}]}',
    );
  });

  it("lists a derived value's inputs, a rial input in toman only when toman was asked for", () => {
    const { rate } = snapshotOf([view('a', '850000001')]);
    const inputs = [
      { key: 'gold_ounce', value: '2650.5', currency: 'USD', updatedAt: NOW, status: 'ok' as const, source: 'feed' },
      { key: 'usd_free', value: '1000005', currency: 'IRR', updatedAt: NOW - MINUTE, status: 'stale' as const, source: 'desk' },
    ];
    const report = { name: 'derived', value: '850000001', updatedAt: NOW - MINUTE, state: 'active' as const, used: true, rejected: null, droppedReason: null, inputs };
    const time = new ZoneTime('Asia/Tehran');
    const entry = (unit: 'rial' | 'toman') => JSON.parse(withSources('{"key":"coin_emami"}', rate, [report], time, unit)).sources[0];
    assert.deepEqual(entry('rial').inputs, [
      { key: 'gold_ounce', value: 2650.5, currency: 'USD', updated_at: '2026-11-21T14:03:07+03:30', status: 'ok', source: 'feed' },
      { key: 'usd_free', value: 1000005, currency: 'IRR', updated_at: '2026-11-21T14:02:07+03:30', status: 'stale', source: 'desk' },
    ]);
    assert.deepEqual(entry('toman').inputs[1], { key: 'usd_free', value: 100000.5, currency: 'IRT', updated_at: '2026-11-21T14:02:07+03:30', status: 'stale', source: 'desk' });
    assert.equal(entry('toman').inputs[0].value, 2650.5);
    // Any other source has no inputs field at all.
    assert.equal('inputs' in JSON.parse(withSources('{"key":"coin_emami"}', rate, [{ ...report, name: 'a', inputs: undefined }], time)).sources[0], false);
  });
});
