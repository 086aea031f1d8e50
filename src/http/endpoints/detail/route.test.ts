import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ErrorSchema } from '../../schemas.js';
import { json, SAMPLE } from '../../../../test/support/harness.js';
import { eventually, writeRaw, writeSource } from '../../../../test/support/env.js';
import { assertMatches, routeSuite } from '../../../../test/support/route-suite.js';
import { DetailResponse } from './schema.js';

routeSuite('GET /v1/rates/{keys} (detail)', (s) => {
  it('resolves aliases to canonical keys, in request order, each once', async () => {
    // On a loaded machine the first answers right after start have served beta's values (cause not
    // yet found); alpha, first in priority, must be serving within a few polls.
    const response = (await eventually(async () => {
      const answer = await s.get('/v1/rates/sekkeh,usd_free,coin_emami,USD_FREE, gold_18k');
      return answer.statusCode !== 200 || (json(answer).rates as { source: string }[]).every((r) => r.source === 'alpha') ? answer : null;
    }, 5000, 100))!;
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assertMatches(DetailResponse, body);
    const rates = body.rates as { key: string; value: number; source: string; status: string; updated_at: string }[];
    assert.deepEqual(rates.map((r) => r.key), ['coin_emami', 'usd_free', 'gold_18k']);
    assert.equal(body.count, 3);
    assert.deepEqual(body.meta, { max_keys: 10, includes_prices: true, unknown_keys: [], denied_keys: [] });
    // The harness writes alpha values ending in 1 and beta in 2; alpha is first in priority.
    assert.deepEqual(rates.map((r) => [r.value, r.source, r.status]), [[1_000_000_001, 'alpha', 'ok'], [1_000_001, 'alpha', 'ok'], [100_000_001, 'alpha', 'ok']]);
    assert.match(rates[0]!.updated_at, /\+03:30$/);
  });
  it('lists unknown keys in meta and 404s when nothing resolves', async () => {
    const partial = json(await s.get('/v1/rates/usd_free,no_such_thing'));
    assert.deepEqual((partial.meta as { unknown_keys: string[] }).unknown_keys, ['no_such_thing']);
    const none = await s.get('/v1/rates/nothing_here,nor_here');
    assert.equal(none.statusCode, 404);
    assert.equal(json(none).error, 'RATE_NOT_FOUND');
    assertMatches(ErrorSchema, json(none));
  });
  it('validates the keys segment', async () => {
    for (const [path, code] of [
      ['/v1/rates/usd_free,,eur_free', 'INVALID_KEYS'],
      ['/v1/rates/' + encodeURIComponent('usd free'), 'INVALID_KEYS'],
      ['/v1/rates/%E0%A4%A', 'INVALID_KEYS'],
      ['/v1/rates/' + 'x'.repeat(65), 'INVALID_KEYS'],
      ['/v1/rates/a,b,c,d,e,f,g,h,i,j,k', 'RATE_KEYS_LIMIT_EXCEEDED'],
    ] as const) {
      const response = await s.get(path);
      assert.equal(response.statusCode, 400, path);
      assert.equal(json(response).error, code, path);
    }
    // Eleven names but ten distinct after de-duplication is fine.
    const ten = await s.get('/v1/rates/a,b,c,d,e,f,g,h,i,usd_free,USD_FREE');
    assert.equal(ten.statusCode, 200, ten.body);
  });
  it('serves values with the exact digits of the source', async () => {
    writeRaw(s.harness.config.sources[0]!.path!, `{"items":{"${SAMPLE.usd_free}":1234567,"${SAMPLE.gold_ounce}":300.50},"updated_at":"${new Date().toISOString()}"}`);
    const body = await eventually(async () => {
      const response = await s.get('/v1/rates/usd_free,gold_ounce');
      return response.body.includes('"value":300.50') ? response.body : null;
    }, 4000);
    assert.ok(body?.includes('"value":1234567'), 'body?.includes(\'"value":1234567\')');
  });
  it('304 for an unchanged selection, a new ETag when a value changes', async () => {
    const first = await s.get('/v1/rates/usd_free');
    assert.equal((await s.get('/v1/rates/usd_free', { 'if-none-match': String(first.headers.etag) })).statusCode, 304);
    writeSource(s.harness.config.sources[0]!.path!, { [SAMPLE.usd_free]: 1111111 });
    await eventually(async () => (await s.get('/v1/rates/usd_free', { 'if-none-match': String(first.headers.etag) })).statusCode === 200, 4000);
  });
  it('HEAD answers like GET without a body', async () => {
    const response = await s.harness.app.inject({ method: 'HEAD', url: '/v1/rates/usd_free', headers: { 'x-api-key': s.key } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, '');
    assert.ok(response.headers.etag, 'response.headers.etag');
  });
});
