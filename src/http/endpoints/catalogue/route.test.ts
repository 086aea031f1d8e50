import assert from 'node:assert/strict';
import { it } from 'node:test';
import { json } from '../../../../test/support/harness.js';
import { assertMatches, routeSuite } from '../../../../test/support/route-suite.js';
import { CatalogueResponse } from './schema.js';

routeSuite('GET /v1/rates (catalogue)', (s) => {
  it('lists every active reference without prices', async () => {
    const response = await s.get('/v1/rates');
    assert.equal(response.statusCode, 200);
    const body = json(response);
    assertMatches(CatalogueResponse, body);
    const references = body.references as Record<string, unknown>[];
    assert.ok(references.length > 300, 'references.length > 300');
    assert.equal(body.count, references.length);
    assert.ok(references.every((r) => !('value' in r) && r.status === 'active' && typeof r.aliases === 'string'), 'references.every((r) => !(\'value\' in r) && r.status === \'active\' && typeof r.aliases === \'string\')');
    assert.match(String(response.headers['cache-control']), /^private, max-age=\d+$/);
  });
  it('says the currency and per of each price, and keeps the sanity band internal', async () => {
    const references = json(await s.get('/v1/rates')).references as Record<string, unknown>[];
    assert.ok(references.every((r) => typeof r.currency === 'string' && typeof r.per === 'string' && !('min' in r) && !('max' in r)), 'references.every((r) => typeof r.currency === \'string\' && typeof r.per === \'string\' && !(\'min\' in r) && !(\'max\' in r))');
    const byKey = new Map(references.map((r) => [r.key, r]));
    assert.deepEqual(
      ['gold_18k', 'coin_emami', 'jpy_free', 'gold_ounce'].map((key) => [byKey.get(key)?.currency, byKey.get(key)?.per, byKey.get(key)?.unit]),
      [
        ['IRR', 'gram', 'ریال/گرم'],
        ['IRR', 'coin', 'ریال/سکه'],
        ['IRR', '100 units', 'ریال/۱۰۰ ین'],
        ['USD', 'ounce', 'دلار/اونس'],
      ],
    );
  });
  it('filters by category and by q (key, alias, title)', async () => {
    const gold = json(await s.get('/v1/rates?category=gold')).references as { category: string }[];
    assert.ok(gold.length > 5 && gold.every((r) => r.category === 'gold'), 'gold.length > 5 && gold.every((r) => r.category === \'gold\')');
    const sekkeh = json(await s.get('/v1/rates?q=sekkeh')).references as { key: string }[];
    assert.ok(sekkeh.some((r) => r.key === 'coin_emami'), 'sekkeh.some((r) => r.key === \'coin_emami\')');
    const persian = json(await s.get(`/v1/rates?q=${encodeURIComponent('سکه امامی')}`)).references as { key: string }[];
    assert.ok(persian.some((r) => r.key === 'coin_emami'), 'persian.some((r) => r.key === \'coin_emami\')');
  });
  it('rejects a bad or unknown query parameter, naming it', async () => {
    const bad = await s.get('/v1/rates?category=nonsense');
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).error, 'INVALID_PARAMETER');
    assert.equal(json(bad).message, 'Query parameter "category" must be one of: gold, coin, currency, precious_metal, industrial_metal, energy, crypto.');
    const unknown = await s.get('/v1/rates?categroy=gold');
    assert.equal(json(unknown).error, 'INVALID_PARAMETER');
    assert.match(String(json(unknown).message), /categroy/);
  });
  it('answers If-None-Match with 304', async () => {
    const first = await s.get('/v1/rates');
    const second = await s.get('/v1/rates', { 'if-none-match': String(first.headers.etag) });
    assert.equal(second.statusCode, 304);
    assert.equal(second.body, '');
  });
});
