import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_DAY_FIELDS, type SourceValue } from '../../src/domain/rate.js';
import type { Reference } from '../../src/domain/reference.js';
import { resolveReference, type SourceView } from '../../src/domain/resolve.js';
import { DEFAULT_SCREENING } from '../../src/domain/screening.js';
import { ZoneTime } from '../../src/domain/time.js';
import { ageSnapshot, sameRates } from '../../src/live/ageing.js';
import { prepareRate } from '../../src/live/prepare.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { assessHealth, healthAt } from '../../src/sources/health.js';

const T0 = Date.parse('2026-11-21T10:33:07Z');
const S = 1000;
const time = new ZoneTime('Asia/Tehran');

function reference(key: string, sourceKey: string): Reference {
  return { key, title: key, title_en: key, description: '', unit: 'ریال', currency: 'IRR', per: 'unit', min: null, max: null, category: 'currency', source_key: sourceKey, aliases: [], status: 'active' };
}

const REFERENCES = [reference('usd_free', 'usd'), reference('eur_free', 'eur'), reference('gbp_free', 'gbp')];
const MAX_AGE = new Map([['alpha', 30 * S]]);

/** What the leader's engine would build at `now` from one source holding usd (fresh at T0) and eur (already old). */
function build(now: number): Snapshot {
  const items = new Map<string, SourceValue>([
    ['usd', { raw: '1000000', value: 1_000_000, updatedAt: T0 - 5 * S }],
    ['eur', { raw: '1200000', value: 1_200_000, updatedAt: T0 - 100 * S }],
  ]);
  const view: SourceView = { name: 'alpha', healthy: true, maxAgeMs: 30 * S, items };
  const rates = new Map<string, PreparedRate>();
  const counts = { ok: 0, stale: 0, unavailable: 0 };
  for (const ref of REFERENCES) {
    const rate = resolveReference(ref, [view], now, undefined, DEFAULT_SCREENING).rate;
    counts[rate.status]++;
    rates.set(ref.key, prepareRate({ ...rate, ...NO_DAY_FIELDS }, time));
  }
  return { version: 7, builtAt: now, rates, lastUpdate: T0 - 5 * S, counts };
}

const json = (snapshot: Snapshot) => [...snapshot.rates.values()].map((prepared) => prepared.json);

describe('ageing a snapshot no leader refreshes', () => {
  it('says what the engine itself would say at that moment: fresh values past their max age turn stale, stale ages move on', () => {
    const built = build(T0);
    assert.deepEqual(built.counts, { ok: 1, stale: 1, unavailable: 1 });
    for (const later of [T0 + 10 * S, T0 + 25 * S + 1, T0 + 40 * S, T0 + 3600 * S]) {
      const aged = ageSnapshot(built, later, MAX_AGE, time);
      assert.deepEqual(json(aged), json(build(later)), `at +${(later - T0) / S} s`);
      assert.deepEqual(aged.counts, build(later).counts);
      assert.equal(aged.version, built.version, 'the same data: the same version');
    }
  });

  it('returns the snapshot itself when nothing changed, and keeps unchanged rates as they were', () => {
    const built = build(T0);
    const stillSame = ageSnapshot(built, T0 + 400, MAX_AGE, time);
    assert.equal(stillSame, built);
    const aged = ageSnapshot(built, T0 + 40 * S, MAX_AGE, time);
    assert.notEqual(aged, built);
    assert.equal(aged.rates.get('gbp_free'), built.rates.get('gbp_free'), 'unavailable stays as it was');
    assert.equal(aged.builtAt, T0 + 40 * S);
    assert.deepEqual([...aged.rates.keys()], [...built.rates.keys()], 'catalogue order kept');
    assert.ok(sameRates(built, build(T0)) === false, 'rates prepared apart are different objects');
    assert.ok(sameRates(built, { ...built, version: 8 }), 'sameRates(built, { ...built, version: 8 })');
  });

  it('leaves a value from a source it has no max age for as the leader built it', () => {
    const built = build(T0);
    assert.equal(ageSnapshot(built, T0 + 3600 * S, new Map(), time).rates.get('usd_free')!.rate.status, 'ok');
  });
});

describe('a source health shown later', () => {
  const facts = { name: 'alpha', maxAgeSeconds: 30, dataTime: T0 - 5 * S, readError: null, lastCheck: T0, dropped: 0, bands: null, outliers: 0, held: 0, outliersTotal: 0 };

  it('is what the monitor would say then: the age moves and old data is degraded with the monitor’s own words', () => {
    const shared = assessHealth(facts, T0);
    for (const later of [T0, T0 + 10 * S, T0 + 26 * S, T0 + 300 * S]) {
      const shown = healthAt(shared, later, 30);
      const direct = assessHealth(facts, later);
      assert.deepEqual([shown.state, shown.age_seconds, shown.error], [direct.state, direct.age_seconds, direct.error], `at +${(later - T0) / S} s`);
    }
  });

  it('keeps a degraded or down source as it was but for its age', () => {
    const failing = assessHealth({ ...facts, readError: 'file not found' }, T0);
    const shown = healthAt(failing, T0 + 100 * S, 30);
    assert.deepEqual([shown.state, shown.error, shown.age_seconds], ['degraded', 'file not found', 105]);
    const down = assessHealth({ ...facts, dataTime: null }, T0);
    assert.equal(healthAt(down, T0 + 100 * S, 30), down);
  });
});
