import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveReference, type JumpHold, type KnownValue } from '../../src/domain/resolve.js';
import { DEFAULT_SCREENING, findOutliers, type Screening } from '../../src/domain/screening.js';
import { MINUTE, NOW, sourceView, testReference } from './fixtures.js';

const usd = testReference({
  key: 'usd_free',
  title: 'دلار آزاد',
  title_en: 'US dollar (free market)',
  unit: 'ریال/دلار',
  min: 10_000,
  max: 100_000_000,
  source_key: 'usd',
});

const source = (name: string, raw: string | null, options?: { ageMs?: number; healthy?: boolean }) => sourceView(name, 'usd', raw, options);

const known = (raw: string, sourceName = 'a'): KnownValue => ({ value: { raw, value: Number(raw), updatedAt: NOW - MINUTE }, source: sourceName });
const jumps: Screening = { ...DEFAULT_SCREENING, maxJumpPercent: 10, confirmMs: 60_000 };

describe('findOutliers', () => {
  it('flags a value beyond 5 × MAD of the median, and never within 2 % of it', () => {
    assert.deepEqual(findOutliers([1_000_000, 1_000_100, 10_000_000], DEFAULT_SCREENING), [2]);
    // MAD is 0 for identical quotes: the 2 % floor keeps a small move from being called an outlier.
    assert.deepEqual(findOutliers([1_000_000, 1_000_000, 1_015_000], DEFAULT_SCREENING), []);
    assert.deepEqual(findOutliers([1_000_000, 1_000_000, 1_025_000], DEFAULT_SCREENING), [2]);
    // A wide but even spread has no outlier.
    assert.deepEqual(findOutliers([100, 110, 120, 130], DEFAULT_SCREENING), []);
    // Two against two: nothing to tell which pair is wrong.
    assert.deepEqual(findOutliers([100, 100, 1000, 1000], DEFAULT_SCREENING), []);
  });

  it('gives no verdict below three values', () => {
    assert.deepEqual(findOutliers([1, 1000], DEFAULT_SCREENING), []);
  });

  it('follows a reference’s own tolerance', () => {
    assert.deepEqual(findOutliers([1_000_000, 1_000_000, 1_015_000], { ...DEFAULT_SCREENING, outlierMinPercent: 1 }), [2]);
  });
});

describe('resolveReference: outliers', () => {
  it('never serves an outlier, even from the first source in priority: the next one supplies the value', () => {
    // A toman figure in a rial feed: ten times too small, yet inside the band.
    const { rate, screened } = resolveReference(usd, [source('a', '100000'), source('b', '1000002'), source('c', '1000003')], NOW, undefined, DEFAULT_SCREENING);
    assert.deepEqual([rate.status, rate.source, rate.value], ['ok', 'b', '1000002']);
    assert.deepEqual([...screened!], [['a', 'outlier']]);
  });

  it('never serves an outlier as the stale fallback either', () => {
    const sources = [source('a', '100000'), source('b', '1000002', { healthy: false }), source('c', '1000003', { healthy: false }), source('d', '1000004'), source('e', '1000005')];
    const { rate } = resolveReference(usd, sources, NOW, undefined, DEFAULT_SCREENING);
    assert.deepEqual([rate.status, rate.source], ['ok', 'd']);
    const allStale = resolveReference(usd, [source('a', '100000'), source('b', '1000002'), source('c', '1000003')], NOW + 10 * MINUTE, undefined, DEFAULT_SCREENING);
    assert.equal(allStale.screened, null, 'only fresh values are screened');
  });

  it('does not screen with two fresh values: a disagreement between two is failover’s to settle', () => {
    const { rate, screened } = resolveReference(usd, [source('a', '100000'), source('b', '1000002'), source('c', '1000003', { ageMs: 10 * MINUTE })], NOW, undefined, DEFAULT_SCREENING);
    assert.deepEqual([rate.source, rate.value, screened], ['a', '100000', null]);
  });
});

describe('resolveReference: jump hold', () => {
  it('serves an ordinary move at once', () => {
    const { rate, hold } = resolveReference(usd, [source('a', '1050000')], NOW, known('1000000'), jumps);
    assert.deepEqual([rate.status, rate.value, hold], ['ok', '1050000', undefined]);
  });

  it('holds a single source’s jump: the next source supplies the value', () => {
    const { rate, screened, hold } = resolveReference(usd, [source('a', '1500000'), source('b', '1000002')], NOW, known('1000000'), jumps);
    assert.deepEqual([rate.status, rate.source, rate.value], ['ok', 'b', '1000002']);
    assert.deepEqual([...screened!], [['a', 'held']]);
    assert.deepEqual(hold, { source: 'a', since: NOW });
  });

  it('with no other source, keeps serving the last value as stale while the jump is held', () => {
    const { rate, hold } = resolveReference(usd, [source('a', '1500000')], NOW, known('1000000'), jumps);
    assert.deepEqual([rate.status, rate.value], ['stale', '1000000']);
    assert.deepEqual(hold, { source: 'a', since: NOW });
  });

  it('serves the jump once a second source confirms it', () => {
    const { rate, hold, screened } = resolveReference(usd, [source('a', '1500000'), source('b', '1490000')], NOW, known('1000000'), jumps);
    assert.deepEqual([rate.status, rate.source, rate.value, hold, screened], ['ok', 'a', '1500000', undefined, null]);
  });

  it('serves the jump once confirm_seconds have passed since it was first held', () => {
    const first: JumpHold = { source: 'a', since: NOW - 59_000 };
    assert.equal(resolveReference(usd, [source('a', '1500000')], NOW, known('1000000'), jumps, first).rate.status, 'stale');
    const later = resolveReference(usd, [source('a', '1500000')], NOW + 1000, known('1000000'), jumps, first);
    assert.deepEqual([later.rate.status, later.rate.value, later.hold], ['ok', '1500000', undefined]);
  });

  it('starts the wait again when another source jumps', () => {
    const { hold } = resolveReference(usd, [source('b', '1500000')], NOW, known('1000000'), jumps, { source: 'a', since: NOW - 59_000 });
    assert.deepEqual(hold, { source: 'b', since: NOW });
  });

  it('has no jump rule unless configured, and none without a last served value', () => {
    assert.equal(resolveReference(usd, [source('a', '1500000')], NOW, known('1000000'), DEFAULT_SCREENING).rate.value, '1500000');
    assert.equal(resolveReference(usd, [source('a', '1500000')], NOW, undefined, jumps).rate.value, '1500000');
  });

  it('calls a jump the other fresh sources disagree with an outlier, not a hold', () => {
    const sources = [source('a', '1500000'), source('b', '1000001'), source('c', '1000002'), source('d', '1500001', { ageMs: 10 * MINUTE })];
    const { rate, screened, hold } = resolveReference(usd, sources, NOW, known('1000000'), jumps);
    assert.deepEqual([rate.source, rate.value, hold], ['b', '1000001', undefined]);
    assert.deepEqual([...screened!], [['a', 'outlier']]);
  });
});
