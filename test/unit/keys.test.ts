import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { NO_DAY_FIELDS, type Rate } from '../../src/domain/rate.js';
import { ZoneTime } from '../../src/domain/time.js';
import { ApiError, type ErrorCode } from '../../src/domain/errors.js';
import { prepareRate } from '../../src/live/prepare.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { renderDetail } from '../../src/http/endpoints/detail/render.js';
import { MAX_KEYS, parseKeyList } from '../../src/render/reference-keys.js';

function apiError(code: ErrorCode, status: number) {
  return (error: unknown) => {
    assert.ok(error instanceof ApiError, `not an ApiError: ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.statusCode, status);
    return true;
  };
}

describe('parseKeyList', () => {
  it('trims and lowercases', () => {
    assert.deepEqual(parseKeyList(' USD_free , Sekkeh ,gold_18k'), ['usd_free', 'sekkeh', 'gold_18k']);
  });

  it('drops duplicates, keeping the first occurrence in order', () => {
    assert.deepEqual(parseKeyList('b,a,B, a ,c,b'), ['b', 'a', 'c']);
  });

  it('accepts a single key and the allowed punctuation', () => {
    assert.deepEqual(parseKeyList('usd'), ['usd']);
    assert.deepEqual(parseKeyList('a.b-c_d,9x'), ['a.b-c_d', '9x']);
    assert.deepEqual(parseKeyList('k'.repeat(64)), ['k'.repeat(64)]);
  });

  for (const segment of ['', '   ', ',', 'a,,b', 'a,', ',a', 'a, ,b']) {
    it(`rejects empty keys: ${JSON.stringify(segment)}`, () => {
      assert.throws(() => parseKeyList(segment), apiError('INVALID_KEYS', 400));
    });
  }

  for (const segment of ['usd free', 'usd$', '_usd', '.usd', '-usd', '../etc', 'دلار', 'usd;drop', 'k'.repeat(65), 'a,b c']) {
    it(`rejects bad characters: ${JSON.stringify(segment.length > 20 ? segment.slice(0, 20) + '…' : segment)}`, () => {
      assert.throws(() => parseKeyList(segment), apiError('INVALID_KEYS', 400));
    });
  }

  it('allows ten distinct keys', () => {
    const keys = Array.from({ length: MAX_KEYS }, (_, i) => `k${i}`);
    assert.equal(MAX_KEYS, 10);
    assert.deepEqual(parseKeyList(keys.join(',')), keys);
  });

  it('rejects eleven distinct keys with RATE_KEYS_LIMIT_EXCEEDED', () => {
    const keys = Array.from({ length: 11 }, (_, i) => `k${i}`);
    assert.throws(() => parseKeyList(keys.join(',')), apiError('RATE_KEYS_LIMIT_EXCEEDED', 400));
  });

  it('counts distinct keys after de-duplication: eleven items with one duplicate pass', () => {
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    assert.equal(parseKeyList([...keys, 'K3'].join(',')).length, 10);
    assert.equal(parseKeyList([...keys, ' k0 '].join(',')).length, 10);
  });
});

describe('renderDetail', () => {
  const NOW = Date.parse('2026-11-21T10:33:07Z');
  const GENERATED = '2026-11-21T14:03:07+03:30';
  const time = new ZoneTime('Asia/Tehran');
  let catalogue: Catalogue;
  let snapshot: Snapshot;

  const prepare = (rate: Rate): PreparedRate => prepareRate(rate, time);

  /** A snapshot with every reference ok at a value derived from its index, with some overrides. */
  function buildSnapshot(version: number, overrides: Record<string, string> = {}): Snapshot {
    const rates = new Map<string, PreparedRate>();
    catalogue.references.forEach((reference, i) => {
      const rate: Rate = {
        key: reference.key,
        title: reference.title,
        unit: reference.unit,
        currency: reference.currency,
        per: reference.per,
        source_key: reference.source_key,
        value: overrides[reference.key] ?? String(1000 + i),
        updated_at: NOW,
        status: 'ok',
        source: 'alpha',
        ...NO_DAY_FIELDS,
      };
      rates.set(reference.key, prepare(rate));
    });
    return { version, builtAt: NOW, rates, lastUpdate: NOW, counts: { ok: rates.size, stale: 0, unavailable: 0 } };
  }

  interface Body {
    success: boolean;
    status: string;
    generated_at: string;
    count: number;
    rates: { key: string; value: number; source: string }[];
    meta: { max_keys: number; includes_prices: boolean; unknown_keys: string[]; denied_keys: string[] };
  }

  function render(segment: string, allowance: ReadonlySet<string> | null = null, snap: Snapshot = snapshot) {
    const rendered = renderDetail(snap, catalogue, segment, allowance, GENERATED);
    return { ...rendered, json: JSON.parse(rendered.body) as Body };
  }

  before(() => {
    catalogue = loadCatalogue(BUNDLED_CATALOGUE);
    snapshot = buildSnapshot(1, { usd_free: '1200000', gold_18k: '300.50' });
  });

  it('returns a valid JSON envelope', () => {
    const { json, etag } = render('usd_free');
    assert.equal(json.success, true);
    assert.equal(json.status, 'ok');
    assert.equal(json.generated_at, GENERATED);
    assert.equal(json.count, 1);
    assert.deepEqual(json.meta, { max_keys: 10, includes_prices: true, unknown_keys: [], denied_keys: [] });
    assert.match(etag, /^"d[0-9a-z]+"$/);
  });

  it('embeds the prepared rate JSON, keeping the raw number text', () => {
    const { body } = render('gold_18k,usd_free');
    assert.ok(body.includes(snapshot.rates.get('gold_18k')!.json), 'body.includes(snapshot.rates.get(\'gold_18k\')!.json)');
    assert.ok(body.includes('"value":300.50,'), 'body.includes(\'"value":300.50,\')');
    assert.ok(body.includes('"value":1200000,'), 'body.includes(\'"value":1200000,\')');
  });

  it('resolves an alias to its canonical key', () => {
    const { json } = render('sekkeh');
    assert.deepEqual(
      json.rates.map((r) => r.key),
      ['coin_emami'],
    );
    assert.deepEqual(
      render('18AYAR').json.rates.map((r) => r.key),
      ['gold_18k'],
    );
  });

  it('keeps request order', () => {
    assert.deepEqual(
      render('gold_18k,usd_free,sekkeh').json.rates.map((r) => r.key),
      ['gold_18k', 'usd_free', 'coin_emami'],
    );
    assert.deepEqual(
      render('sekkeh,gold_18k,usd_free').json.rates.map((r) => r.key),
      ['coin_emami', 'gold_18k', 'usd_free'],
    );
  });

  it('returns a reference once when asked by alias and by key', () => {
    const { json } = render('sekkeh,coin_emami,usd_free,SEKKEH,emami');
    assert.deepEqual(
      json.rates.map((r) => r.key),
      ['coin_emami', 'usd_free'],
    );
    assert.equal(json.count, 2);
  });

  it('lists unknown keys in meta and returns the rest', () => {
    const { json } = render('usd_free,no_such_key,Other_Missing');
    assert.equal(json.count, 1);
    assert.deepEqual(json.meta.unknown_keys, ['no_such_key', 'other_missing']);
    assert.deepEqual(json.meta.denied_keys, []);
  });

  it('lists keys outside the allowance in denied_keys and returns the rest', () => {
    const { json } = render('usd_free,sekkeh,gold_18k', new Set(['usd_free', 'gold_18k']));
    assert.deepEqual(
      json.rates.map((r) => r.key),
      ['usd_free', 'gold_18k'],
    );
    assert.deepEqual(json.meta.denied_keys, ['sekkeh']);
    assert.equal(json.count, 2);
  });

  it('checks the allowance by canonical key, so an alias of an allowed reference passes', () => {
    const { json } = render('sekkeh', new Set(['coin_emami']));
    assert.deepEqual(
      json.rates.map((r) => r.key),
      ['coin_emami'],
    );
  });

  it('answers 404 RATE_NOT_FOUND when every key is unknown', () => {
    assert.throws(() => render('nope_a,nope_b'), apiError('RATE_NOT_FOUND', 404));
  });

  it('answers 403 REFERENCE_NOT_IN_PLAN when every known key is denied', () => {
    assert.throws(() => render('usd_free,sekkeh', new Set(['gold_18k'])), apiError('REFERENCE_NOT_IN_PLAN', 403));
    assert.throws(() => render('usd_free,nope', new Set(['gold_18k'])), apiError('REFERENCE_NOT_IN_PLAN', 403));
  });

  it('passes key syntax errors through', () => {
    assert.throws(() => render('usd_free,,gold_18k'), apiError('INVALID_KEYS', 400));
    assert.throws(() => render(Array.from({ length: 11 }, (_, i) => `k${i}`).join(',')), apiError('RATE_KEYS_LIMIT_EXCEEDED', 400));
  });

  it('gives a stable ETag for the same rates, whatever generated_at or snapshot version', () => {
    const a = renderDetail(snapshot, catalogue, 'usd_free,gold_18k', null, GENERATED);
    const b = renderDetail(snapshot, catalogue, 'usd_free,gold_18k', null, '2026-11-21T14:03:09+03:30');
    const c = renderDetail(buildSnapshot(7, { usd_free: '1200000', gold_18k: '300.50' }), catalogue, 'usd_free,gold_18k', null, GENERATED);
    assert.equal(a.etag, b.etag);
    assert.equal(a.etag, c.etag);
  });

  it('changes the ETag when a requested rate changes, not when another does', () => {
    const changedUsd = buildSnapshot(2, { usd_free: '1200001', gold_18k: '300.50' });
    assert.notEqual(render('usd_free,gold_18k', null, changedUsd).etag, render('usd_free,gold_18k').etag);
    assert.equal(render('gold_18k', null, changedUsd).etag, render('gold_18k').etag);
    // Even a change of digits only (same numeric value) is a change of the body.
    const sameNumber = buildSnapshot(3, { usd_free: '1200000', gold_18k: '300.5' });
    assert.notEqual(render('gold_18k', null, sameNumber).etag, render('gold_18k').etag);
  });

  it('changes the ETag when the set of returned or denied keys changes', () => {
    assert.notEqual(render('usd_free').etag, render('usd_free,gold_18k').etag);
    assert.notEqual(render('usd_free,gold_18k').etag, render('gold_18k,usd_free').etag);
    assert.notEqual(render('usd_free,gold_18k', new Set(['usd_free'])).etag, render('usd_free,gold_18k').etag);
  });
});
