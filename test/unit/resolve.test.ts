import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_DAY_FIELDS, serialiseWebserviceEntry, serialiseRate, type Rate, type ResolvedRate, type SourceValue } from '../../src/domain/rate.js';
import type { Reference } from '../../src/domain/reference.js';
import { countBands, inBand, isFresh, resolveReference, staleFrom, type KnownValue, type SourceView } from '../../src/domain/resolve.js';
import { DEFAULT_SCREENING } from '../../src/domain/screening.js';
import { ZoneTime } from '../../src/domain/time.js';
import { MINUTE, NOW, testReference } from './fixtures.js';

/** Resolution with the default screening and no hold: failover and bands alone. */
const resolveRate = (reference: Reference, sources: SourceView[], now: number, lastKnown: KnownValue | undefined): ResolvedRate =>
  resolveReference(reference, sources, now, lastKnown, DEFAULT_SCREENING).rate;

const reference = testReference({
  key: 'usd_free',
  title: 'دلار آزاد',
  title_en: 'US dollar (free market)',
  source_key: 'ir_fx_free_usd',
  aliases: ['dollar'],
});

function value(raw: string, ageMs: number): SourceValue {
  return { raw, value: Number(raw), updatedAt: NOW - ageMs };
}

function source(name: string, items: Record<string, SourceValue>, options: { healthy?: boolean; maxAgeMinutes?: number } = {}): SourceView {
  return { name, healthy: options.healthy ?? true, maxAgeMs: (options.maxAgeMinutes ?? 5) * MINUTE, items: new Map(Object.entries(items)) };
}

describe('isFresh', () => {
  it('is inclusive of the max age and false beyond it', () => {
    assert.equal(isFresh(value('1', 5 * MINUTE), 5 * MINUTE, NOW), true);
    assert.equal(isFresh(value('1', 5 * MINUTE + 1), 5 * MINUTE, NOW), false);
    assert.equal(isFresh(value('1', 0), 5 * MINUTE, NOW), true);
  });

  it("ends at a value's own expiry (a manual price), whatever the max age", () => {
    const expiring = (expiresAt: number) => ({ ...value('1', MINUTE), expiresAt });
    assert.equal(isFresh(expiring(NOW + 1), Infinity, NOW), true);
    assert.equal(isFresh(expiring(NOW), Infinity, NOW), false);
    assert.equal(isFresh(expiring(NOW - 1), 5 * MINUTE, NOW), false);
    // The max age still applies to a value that has not expired.
    assert.equal(isFresh(expiring(NOW + MINUTE), 30_000, NOW), false);
    assert.equal(staleFrom(expiring(NOW + MINUTE), 30_000), NOW - MINUTE + 30_001);
    assert.equal(staleFrom(expiring(NOW + MINUTE), Infinity), NOW + MINUTE);
    assert.equal(staleFrom(value('1', 0), 5 * MINUTE), NOW + 5 * MINUTE + 1);
  });

  it('lets an expired value serve only as stale, and a fresher source win over it', () => {
    const desk = source('desk', { ir_fx_free_usd: { ...value('1000', MINUTE), expiresAt: NOW - 1 } }, { maxAgeMinutes: Infinity });
    const stale = resolveRate(reference, [desk], NOW, undefined);
    assert.deepEqual([stale.status, stale.source, stale.value], ['stale', 'desk', '1000']);
    const feed = source('feed', { ir_fx_free_usd: value('1001', 0) });
    assert.deepEqual([resolveRate(reference, [desk, feed], NOW, undefined).source], ['feed']);
    const unexpired = source('desk', { ir_fx_free_usd: { ...value('1000', MINUTE), expiresAt: NOW + 1 } }, { maxAgeMinutes: Infinity });
    assert.equal(resolveRate(reference, [unexpired, feed], NOW, undefined).source, 'desk');
  });
});

describe('resolveRate', () => {
  it('takes the first healthy source with a fresh value', () => {
    const rate = resolveRate(reference, [source('a', { ir_fx_free_usd: value('1001', MINUTE) }), source('b', { ir_fx_free_usd: value('1002', 0) })], NOW, undefined);
    assert.deepEqual(rate, {
      key: 'usd_free',
      title: 'دلار آزاد',
      unit: 'ریال',
      currency: 'IRR',
      per: 'unit',
      source_key: 'ir_fx_free_usd',
      value: '1001',
      updated_at: NOW - MINUTE,
      status: 'ok',
      source: 'a',
    });
    assert.equal('stale_seconds' in rate, false);
  });

  it('respects the priority order it is given', () => {
    const a = source('a', { ir_fx_free_usd: value('1001', 0) });
    const b = source('b', { ir_fx_free_usd: value('1002', 0) });
    assert.equal(resolveRate(reference, [b, a], NOW, undefined).source, 'b');
    assert.equal(resolveRate(reference, [a, b], NOW, undefined).source, 'a');
  });

  it('falls through to the next source when the first lacks the key', () => {
    const rate = resolveRate(reference, [source('a', { other: value('5', 0) }), source('b', { ir_fx_free_usd: value('1002', 0) })], NOW, undefined);
    assert.equal(rate.source, 'b');
    assert.equal(rate.value, '1002');
    assert.equal(rate.status, 'ok');
  });

  it('skips an unhealthy source even when its value is fresh', () => {
    const rate = resolveRate(
      reference,
      [source('a', { ir_fx_free_usd: value('1001', 0) }, { healthy: false }), source('b', { ir_fx_free_usd: value('1002', MINUTE) })],
      NOW,
      undefined,
    );
    assert.equal(rate.source, 'b');
    assert.equal(rate.status, 'ok');
  });

  it('skips a value older than its source max age', () => {
    const rate = resolveRate(
      reference,
      [source('a', { ir_fx_free_usd: value('1001', 6 * MINUTE) }, { maxAgeMinutes: 5 }), source('b', { ir_fx_free_usd: value('1002', 8 * MINUTE) }, { maxAgeMinutes: 10 })],
      NOW,
      undefined,
    );
    assert.equal(rate.source, 'b');
    assert.equal(rate.value, '1002');
    assert.equal(rate.status, 'ok');
  });

  it('serves the newest value of any source as stale when none is fresh', () => {
    const rate = resolveRate(
      reference,
      [
        source('a', { ir_fx_free_usd: value('1001', 30 * MINUTE) }),
        source('b', { ir_fx_free_usd: value('1002', 10 * MINUTE + 1500) }),
        source('c', { ir_fx_free_usd: value('1003', 20 * MINUTE) }),
      ],
      NOW,
      undefined,
    );
    assert.equal(rate.status, 'stale');
    assert.equal(rate.source, 'b');
    assert.equal(rate.value, '1002');
    assert.equal(rate.updated_at, NOW - 10 * MINUTE - 1500);
    assert.equal(rate.stale_seconds, 601);
  });

  it('uses an unhealthy source as a stale fallback', () => {
    const rate = resolveRate(reference, [source('a', { ir_fx_free_usd: value('1001', 1000) }, { healthy: false })], NOW, undefined);
    assert.equal(rate.status, 'stale');
    assert.equal(rate.source, 'a');
    assert.equal(rate.stale_seconds, 1);
  });

  it('uses the last known value when no source has the key', () => {
    const lastKnown: KnownValue = { value: value('999', 2 * 3_600_000), source: 'gone' };
    const rate = resolveRate(reference, [source('a', { other: value('5', 0) })], NOW, lastKnown);
    assert.equal(rate.status, 'stale');
    assert.equal(rate.value, '999');
    assert.equal(rate.source, 'gone');
    assert.equal(rate.stale_seconds, 7200);
  });

  it('prefers whichever of last known and source values is newer', () => {
    const lastKnown: KnownValue = { value: value('999', 20 * MINUTE), source: 'old' };
    const newerSource = resolveRate(reference, [source('a', { ir_fx_free_usd: value('1001', 10 * MINUTE) })], NOW, lastKnown);
    assert.equal(newerSource.source, 'a');
    const olderSource = resolveRate(reference, [source('a', { ir_fx_free_usd: value('1001', 30 * MINUTE) })], NOW, lastKnown);
    assert.equal(olderSource.source, 'old');
    assert.equal(olderSource.value, '999');
  });

  it('prefers a fresh value over a newer last known one', () => {
    const lastKnown: KnownValue = { value: value('999', 0), source: 'old' };
    const rate = resolveRate(reference, [source('a', { ir_fx_free_usd: value('1001', MINUTE) })], NOW, lastKnown);
    assert.equal(rate.status, 'ok');
    assert.equal(rate.source, 'a');
  });

  it('is unavailable with nulls when nothing is known', () => {
    const rate = resolveRate(reference, [source('a', {}), source('b', { other: value('1', 0) })], NOW, undefined);
    assert.equal(rate.status, 'unavailable');
    assert.equal(rate.value, null);
    assert.equal(rate.updated_at, null);
    assert.equal(rate.source, null);
    assert.equal(rate.stale_seconds, undefined);
    assert.equal(resolveRate(reference, [], NOW, undefined).status, 'unavailable');
  });

  it('keeps the number text exactly as the source wrote it', () => {
    for (const raw of ['300.5', '300.50', '1200000', '12345678901234567890', '0.000012', '1.5e3']) {
      assert.equal(resolveRate(reference, [source('a', { ir_fx_free_usd: value(raw, 0) })], NOW, undefined).value, raw);
    }
  });

  it('reports stale_seconds as 0 for a future-dated stale value', () => {
    const rate = resolveRate(reference, [source('a', { ir_fx_free_usd: value('1', -5000) }, { healthy: false })], NOW, undefined);
    assert.equal(rate.stale_seconds, 0);
  });
});

describe('sanity bands', () => {
  // A coin between 10 million and 10 billion rial: 0.3 or 1e300 is absurd, not a price.
  const coin: Reference = { ...reference, key: 'coin_emami', source_key: 'ir_coin_emami', min: 10_000_000, max: 10_000_000_000 };
  const fresh = (raw: string) => value(raw, MINUTE);

  it('bounds are inclusive and an absent bound is open', () => {
    assert.equal(inBand(coin, 10_000_000), true);
    assert.equal(inBand(coin, 10_000_000_000), true);
    assert.equal(inBand(coin, 9_999_999.99), false);
    assert.equal(inBand(coin, 10_000_000_001), false);
    assert.equal(inBand({ ...coin, min: null }, 0.3), true);
    assert.equal(inBand({ ...coin, max: null }, 1e300), true);
    assert.equal(inBand(reference, 1e300), true);
  });

  it('skips a fresh value below min or above max: the next source supplies it', () => {
    for (const absurd of ['0.3', '1e300']) {
      const rate = resolveRate(coin, [source('a', { ir_coin_emami: fresh(absurd) }), source('b', { ir_coin_emami: fresh('850000000') })], NOW, undefined);
      assert.deepEqual([rate.status, rate.source, rate.value], ['ok', 'b', '850000000'], absurd);
    }
  });

  it('never serves an out-of-band value as a stale fallback, even the newest', () => {
    const a = source('a', { ir_coin_emami: value('0.3', 10 * MINUTE) });
    const b = source('b', { ir_coin_emami: value('850000000', 20 * MINUTE) });
    const rate = resolveRate(coin, [a, b], NOW, undefined);
    assert.deepEqual([rate.status, rate.source, rate.value], ['stale', 'b', '850000000']);
  });

  it('falls back to the last known value when every source is out of band', () => {
    const known: KnownValue = { value: value('840000000', 30 * MINUTE), source: 'b' };
    const rate = resolveRate(coin, [source('a', { ir_coin_emami: fresh('1e300') })], NOW, known);
    assert.deepEqual([rate.status, rate.source, rate.value], ['stale', 'b', '840000000']);
  });

  it('is unavailable when nothing in band is known, rather than serve an absurd value', () => {
    const outOfBandKnown: KnownValue = { value: value('0.3', 0), source: 'a' };
    const rate = resolveRate(coin, [source('a', { ir_coin_emami: fresh('0.3') })], NOW, outOfBandKnown);
    assert.deepEqual([rate.status, rate.value, rate.source], ['unavailable', null, null]);
  });

  it('counts each source’s values in and out of band over the catalogue', () => {
    const gold: Reference = { ...reference, key: 'gold_18k', source_key: 'ir_gold_18k_gram', min: 1_000_000, max: 1_000_000_000 };
    const a = source('a', { ir_coin_emami: fresh('0.3'), ir_gold_18k_gram: fresh('1e300'), ir_fx_free_usd: fresh('1') });
    const b = source('b', { ir_coin_emami: fresh('850000000'), not_in_catalogue: fresh('5') });
    const counts = countBands([coin, gold, reference], [a, b]);
    assert.deepEqual(counts.get('a'), { inBand: 1, outOfBand: 2 });
    assert.deepEqual(counts.get('b'), { inBand: 1, outOfBand: 0 });
  });
});

describe('serialiseRate', () => {
  const time = new ZoneTime('Asia/Tehran');
  const format = time;
  const base = { key: 'usd_free', title: 'دلار "آزاد"', unit: 'ریال/دلار', currency: 'IRR', per: 'unit' as const, source_key: 'ir_fx_free_usd', ...NO_DAY_FIELDS };
  const DAY_KEYS = ['day_open', 'day_high', 'day_low', 'prev_close', 'change', 'change_percent'];
  const NULL_DAY = ',"day_open":null,"day_high":null,"day_low":null,"prev_close":null,"change":null,"change_percent":null';
  const FIELDS = ['key', 'title', 'value', 'unit', 'currency', 'per', 'source_key', 'updated_at', 'updated_at_jalali', 'status', 'source'];

  it('writes the fields in order with the raw number, a zoned time and its Jalali date and time', () => {
    const rate: Rate = { ...base, value: '300.50', updated_at: NOW, status: 'ok', source: 'alpha' };
    const json = serialiseRate(rate, format);
    assert.equal(
      json,
      '{"key":"usd_free","title":"دلار \\"آزاد\\"","value":300.50,"unit":"ریال/دلار","currency":"IRR","per":"unit","source_key":"ir_fx_free_usd",' +
        '"updated_at":"2026-11-21T14:03:07+03:30","updated_at_jalali":"1405/08/30 14:03:07","status":"ok","source":"alpha"' +
        NULL_DAY +
        ',"market":null}',
    );
    const parsed = JSON.parse(json) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), [...FIELDS, ...DAY_KEYS, 'market']);
    assert.equal(parsed.title, 'دلار "آزاد"');
  });

  it('keeps integers integers and long numbers whole', () => {
    const json = serialiseRate({ ...base, value: '12345678901234567890', updated_at: NOW, status: 'ok', source: 'a' }, format);
    assert.ok(json.includes('"value":12345678901234567890,'), 'json.includes(\'"value":12345678901234567890,\')');
    assert.ok(serialiseRate({ ...base, value: '1200000', updated_at: NOW, status: 'ok', source: 'a' }, format).includes('"value":1200000,'), 'serialiseRate({ ...base, value: \'1200000\', updated_at: NOW, status: \'ok\', source: \'a\' }, format).includes(\'"value":1200000,\')');
  });

  it('adds stale_seconds before the day fields, only for a stale rate', () => {
    const json = serialiseRate({ ...base, value: '1', updated_at: NOW, status: 'stale', source: 'a', stale_seconds: 42 }, format);
    const parsed = JSON.parse(json) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), [...FIELDS, 'stale_seconds', ...DAY_KEYS, 'market']);
    assert.equal(parsed.stale_seconds, 42);
    assert.equal(parsed.status, 'stale');
  });

  it('writes the day fields as exact number text', () => {
    const day = { day_open: '0.1', day_high: '123456789012345678', day_low: '0.1', prev_close: '0.2', change: '-0.1', change_percent: '-50.00' };
    const json = serialiseRate({ ...base, ...day, value: '0.1', updated_at: NOW, status: 'ok', source: 'a' }, format);
    assert.ok(json.endsWith(',"day_open":0.1,"day_high":123456789012345678,"day_low":0.1,"prev_close":0.2,"change":-0.1,"change_percent":-50.00,"market":null}'), json);
  });

  it("ends with the rate's market: its state, why it is closed (English and Persian) and when it opens", () => {
    const market = { name: 'tehran', state: 'closed' as const, reason: 'Friday', reason_fa: 'جمعه', opens_at: Date.parse('2026-11-21T00:00:00+03:30') };
    const json = serialiseRate({ ...base, value: '1', updated_at: NOW, status: 'ok', source: 'a', market }, format);
    assert.ok(json.endsWith(',"market":{"name":"tehran","state":"closed","reason":"Friday","reason_fa":"جمعه","opens_at":"2026-11-21T00:00:00+03:30"}}'), json);
    const open = { name: 'crypto', state: 'open' as const, reason: null, reason_fa: null, opens_at: null };
    assert.deepEqual((JSON.parse(serialiseWebserviceEntry({ ...base, value: '1', updated_at: NOW, status: 'ok', source: 'a', market: open }, format)) as { market: unknown }).market, open);
  });

  it('writes nulls for an unavailable rate', () => {
    const json = serialiseRate({ ...base, value: null, updated_at: null, status: 'unavailable', source: null }, format);
    const parsed = JSON.parse(json) as Record<string, unknown>;
    assert.equal(parsed.value, null);
    assert.equal(parsed.updated_at, null);
    assert.equal(parsed.updated_at_jalali, null);
    assert.equal(parsed.source, null);
    assert.equal(parsed.status, 'unavailable');
    assert.equal('stale_seconds' in parsed, false);
  });
});

describe('serialiseWebserviceEntry', () => {
  const time = new ZoneTime('Asia/Tehran');

  it('writes title, raw value, unit, currency, per, zoned time and Jalali date', () => {
    const rate: Rate = {
      key: 'usd_free',
      title: 'دلار',
      unit: 'ریال/دلار',
      currency: 'IRR',
      per: 'unit',
      source_key: 's',
      value: '300.50',
      updated_at: NOW,
      status: 'ok',
      source: 'a',
      ...NO_DAY_FIELDS,
      change: '0.50',
      change_percent: '0.17',
    };
    assert.equal(
      serialiseWebserviceEntry(rate, time),
      '{"title":"دلار","value":300.50,"unit":"ریال/دلار","currency":"IRR","per":"unit","updated_at":"2026-11-21T14:03:07+03:30","date_jalali":"1405/08/30","change":0.50,"change_percent":0.17,"status":"ok","stale_seconds":null,"market":null}',
    );
  });

  it('says how stale a stale value is', () => {
    const rate: Rate = { key: 'k', title: 't', unit: 'u', currency: 'USD', per: 'ounce', source_key: 's', value: '7', updated_at: NOW, status: 'stale', source: 'a', stale_seconds: 95, ...NO_DAY_FIELDS };
    const parsed = JSON.parse(serialiseWebserviceEntry(rate, time)) as Record<string, unknown>;
    assert.equal(parsed.status, 'stale');
    assert.equal(parsed.stale_seconds, 95);
  });

  it('writes nulls when unavailable', () => {
    const rate: Rate = { key: 'k', title: 't', unit: 'u', currency: 'USD', per: 'ounce', source_key: 's', value: null, updated_at: null, status: 'unavailable', source: null, ...NO_DAY_FIELDS };
    assert.deepEqual(JSON.parse(serialiseWebserviceEntry(rate, time)), {
      title: 't',
      value: null,
      unit: 'u',
      currency: 'USD',
      per: 'ounce',
      updated_at: null,
      date_jalali: null,
      change: null,
      change_percent: null,
      status: 'unavailable',
      stale_seconds: null,
      market: null,
    });
  });
});
