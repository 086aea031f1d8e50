/**
 * /v1/convert and /v1/jewellery through the real service in process (real
 * store, real source files, real snapshots): each figure below was worked out
 * by hand and checked with a decimal library, digit for digit; every bad
 * parameter is answered in the error envelope and names the parameter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { ConvertResponse } from './schema.js';
import { JewelleryResponse } from '../../../http/endpoints/jewellery/schema.js';
import { API_SCHEMAS } from '../../../http/endpoints/registry.js';
import { json, startHarness, type Harness } from '../../../../test/support/harness.js';
import { eventually, writeRaw } from '../../../../test/support/env.js';

function assertMatches(schema: TSchema, body: unknown) {
  assert.ok(Value.Check(schema, API_SCHEMAS, body), `${schema.$id}: ${JSON.stringify([...Value.Errors(schema, API_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
}

/** The number text of a field as the body writes it (JSON.parse would pass it through a float). */
function field(body: string, name: string): string {
  const match = new RegExp(`"${name}":(-?[0-9.]+)[,}]`).exec(body);
  assert.ok(match, `no numeric ${name} in ${body}`);
  return match[1]!;
}

/** Each named figure of `body` as written (see `field`). */
function assertFigures(body: string, figures: Record<string, string>) {
  for (const [name, value] of Object.entries(figures)) assert.equal(field(body, name), value, name);
}

const TEN_MINUTES_AGO = () => new Date(Date.now() - 600_000).toISOString();

describe('convert and jewellery', () => {
  let harness: Harness;
  let key: string;
  const get = (url: string) => harness.app.inject({ url, headers: { 'x-api-key': key } });
  const getOk = async (url: string) => {
    const response = await get(url);
    assert.equal(response.statusCode, 200, response.body);
    return response;
  };
  /** A test for each bad query of `path`: refused by 400 INVALID_PARAMETER naming the parameter. */
  const refusesEach = (path: string, bad: [query: string, name: string][]) => {
    for (const [query, name] of bad) {
      it(`400 INVALID_PARAMETER naming "${name}" for ?${query}`, async () => {
        assertError(await get(`${path}?${query}`), 400, 'INVALID_PARAMETER', new RegExp(`"${name}"`));
      });
    }
  };

  before(async () => {
    harness = await startHarness({ withoutBands: true });
    ({ key } = await harness.keyFor('convert-user', 'enterprise'));
    const now = new Date().toISOString();
    // gold_22k is ten minutes old (its source allows five): served stale, as the detail endpoint serves it. gold_14k has no value at all.
    writeRaw(
      harness.config.sources[0]!.path!,
      JSON.stringify({
        updated_at: now,
        items: {
          ir_gold_18k_gram: 72345678,
          ir_gold_24k_gram: 96460905,
          ir_gold_21k_gram: 84403291,
          ir_gold_22k_gram: { value: 88422496, updated_at: TEN_MINUTES_AGO() },
          ir_fx_free_usd: 1030000,
          ir_fx_free_eur: 1120000,
          ir_fx_free_aed: 30,
          ir_fx_free_gbp: 1024,
          intl_xau_usd_spot: 4000.5,
          intl_xau_usd_gram: 128.6,
          intl_dxy: 104.2,
        },
      }),
    );
    writeRaw(harness.config.sources[1]!.path!, JSON.stringify({ updated_at: now, items: {} }));
    await eventually(async () => (await get('/v1/rates/usd_free,gbp_free,gold_22k')).body.includes('"value":1024,'), 15_000);
  });
  after(() => harness.close());

  describe('GET /v1/convert', () => {
    it('3.5 grams of 18k gold in toman: 3.5 × 72,345,678 ÷ 10, exact', async () => {
      const response = await getOk('/v1/convert?from=gold_18k&to=IRT&amount=3.5');
      assertFigures(response.body, { result: '25320987.3', amount: '3.5' });
      const body = json(response);
      assertMatches(ConvertResponse, body);
      assert.equal(body.from, 'gold_18k');
      assert.equal(body.to, 'IRT');
      const rates = body.rates as Record<string, unknown>[];
      assert.deepEqual(
        rates.map((rate) => [rate.key, rate.value, rate.currency, rate.status]),
        [['gold_18k', 72345678, 'IRR', 'ok']],
      );
      assert.match(String(response.headers['cache-control']), /^private, max-age=\d+$/);
      assert.ok(response.headers.etag, 'response.headers.etag');
    });

    it('the same in rial, through an alias, and back from rial to grams', async () => {
      const rial = await get('/v1/convert?from=18ayar&to=IRR&amount=3.5');
      assert.equal(field(rial.body, 'result'), '253209873');
      assert.equal(json(rial).from, 'gold_18k');
      const back = await get('/v1/convert?from=irr&to=gold_18k&amount=253209873');
      assert.equal(field(back.body, 'result'), '3.5');
      assert.equal(json(back).from, 'IRR');
    });

    it('a quotient that does not terminate is rounded half-even to 6 decimals: 1/3, 2/3, 103/112', async () => {
      // 1 toman = 10 rials; aed_free is 30 rials: 10 ÷ 30 = 0.333…
      assert.equal(field((await get('/v1/convert?from=IRT&to=aed_free&amount=1')).body, 'result'), '0.333333');
      assert.equal(field((await get('/v1/convert?from=IRT&to=aed_free&amount=2')).body, 'result'), '0.666667');
      // 1,030,000 ÷ 1,120,000 = 0.91964285714…
      assert.equal(field((await get('/v1/convert?from=usd&to=eur&amount=1')).body, 'result'), '0.919643');
      // 1,120,000 ÷ 1,030,000 = 1.08737864077…
      assert.equal(field((await get('/v1/convert?from=eur&to=usd&amount=1')).body, 'result'), '1.087379');
    });

    it('a quotient that terminates is exact, however many decimals: 10 ÷ 1024', async () => {
      assert.equal(field((await get('/v1/convert?from=IRT&to=gbp_free&amount=1')).body, 'result'), '0.009765625');
      assert.equal(field((await get('/v1/convert?from=IRR&to=IRT&amount=0.00000001')).body, 'result'), '0.000000001');
    });

    it('takes the largest amount the API page allows, 15 digits and 8 decimals, exactly', async () => {
      const response = await getOk('/v1/convert?from=IRT&to=IRR&amount=999999999999999.99999999');
      assertFigures(response.body, { amount: '999999999999999.99999999', result: '9999999999999999.9999999' });
    });

    it('two references priced in dollars convert: troy ounces to grams at 4000.5 ÷ 128.6', async () => {
      const response = await getOk('/v1/convert?from=gold_ounce&to=gold_gram_usd&amount=1');
      assert.equal(field(response.body, 'result'), '31.108087');
      assert.deepEqual(
        (json(response).rates as Record<string, unknown>[]).map((rate) => rate.key),
        ['gold_ounce', 'gold_gram_usd'],
      );
    });

    it('unit=toman shows the rates used in toman; the result counts `to` either way', async () => {
      const response = await get('/v1/convert?from=usd&to=eur&amount=112&unit=toman');
      assert.equal(field(response.body, 'result'), '103');
      const rates = json(response).rates as Record<string, unknown>[];
      assert.ok(response.body.includes('"value":103000,"unit":"تومان/دلار","currency":"IRT"'), response.body);
      assert.deepEqual(
        rates.map((rate) => [rate.key, rate.currency]),
        [
          ['usd_free', 'IRT'],
          ['eur_free', 'IRT'],
        ],
      );
    });

    it('answers If-None-Match with its ETag by 304, as detail does', async () => {
      const first = await get('/v1/convert?from=usd&to=IRT&amount=2');
      const again = await harness.app.inject({ url: '/v1/convert?from=usd&to=IRT&amount=2', headers: { 'x-api-key': key, 'if-none-match': String(first.headers.etag) } });
      assert.equal(again.statusCode, 304, again.body);
      const other = await harness.app.inject({ url: '/v1/convert?from=usd&to=IRT&amount=3', headers: { 'x-api-key': key, 'if-none-match': String(first.headers.etag) } });
      assert.equal(other.statusCode, 200);
      assert.notEqual(other.headers.etag, first.headers.etag);
    });

    it('one reference on both sides is listed once', async () => {
      const response = await get('/v1/convert?from=usd&to=usd_free&amount=7');
      assert.equal(field(response.body, 'result'), '7');
      assert.equal((json(response).rates as unknown[]).length, 1);
    });

    it('refuses sides priced in different currencies, and an index', async () => {
      const mixed = await get('/v1/convert?from=gold_ounce&to=IRR&amount=1');
      assertError(mixed, 400, 'INVALID_PARAMETER', /"from" and "to" must price in one currency: gold_ounce is priced in USD, IRR in IRR/);
      const index = await get('/v1/convert?from=dxy_index&to=gold_ounce&amount=1');
      assertError(index, 400, 'INVALID_PARAMETER', /"from": dxy_index is an index/);
    });

    it('an unknown reference is 404, one with no value now is 503', async () => {
      assertError(await get('/v1/convert?from=no_such_thing&to=IRR&amount=1'), 404, 'RATE_NOT_FOUND', /no_such_thing/);
      assertError(await get('/v1/convert?from=gold_14k&to=IRR&amount=1'), 503, 'SERVICE_UNAVAILABLE', /gold_14k/);
    });

    refusesEach('/v1/convert', [
      ['to=IRR&amount=1', 'from'],
      ['from=usd&amount=1', 'to'],
      ['from=usd&to=IRR', 'amount'],
      ['from=usd&to=IRR&amount=', 'amount'],
      ['from=usd&to=IRR&amount=-1', 'amount'],
      ['from=usd&to=IRR&amount=0', 'amount'],
      ['from=usd&to=IRR&amount=NaN', 'amount'],
      ['from=usd&to=IRR&amount=Infinity', 'amount'],
      ['from=usd&to=IRR&amount=1e3', 'amount'],
      ['from=usd&to=IRR&amount=0x10', 'amount'],
      ['from=usd&to=IRR&amount=1.', 'amount'],
      ['from=usd&to=IRR&amount=%201', 'amount'],
      ['from=usd&to=IRR&amount=1.123456789', 'amount'],
      ['from=usd&to=IRR&amount=1234567890123456', 'amount'],
      ['from=usd&to=IRR&amount=999999999999999.999999999', 'amount'],
      ['from=usd&to=IRR&amount=1&amount=2', 'amount'],
      ['from=&to=IRR&amount=1', 'from'],
      ['from=bad%20key&to=IRR&amount=1', 'from'],
      ['from=usd&to=IRR&amount=1&unit=dinar', 'unit'],
      ['from=usd&to=IRR&amount=1&value=1', 'value'],
    ]);
  });

  describe('GET /v1/jewellery', () => {
    it('3.5 g of 18k, making 18 %, defaults profit 7 % and VAT 10 %: each line exact, the total rounded once', async () => {
      const response = await getOk('/v1/jewellery?weight=3.5&making_percent=18');
      // gold 3.5 × 72,345,678; making 18 % of it; profit 7 % of gold + making; VAT 10 % of making + profit;
      // the total 326,352,076.91478 rounded half up.
      assertFigures(response.body, { gram_price: '72345678', gold: '253209873', making: '45577777.14', profit: '20915135.5098', vat: '6649291.26498', total: '326352077' });
      const parsed = json(response);
      assertMatches(JewelleryResponse, parsed);
      assert.equal(parsed.karat, 18);
      assert.equal(parsed.currency, 'IRR');
      assertFigures(response.body, { profit_percent: '7', vat_percent: '10' });
      assert.deepEqual(
        (parsed.rates as Record<string, unknown>[]).map((rate) => [rate.key, rate.value, rate.status]),
        [['gold_18k', 72345678, 'ok']],
      );
    });

    it('takes the heaviest weight the API page allows, 6 digits and 4 decimals', async () => {
      const response = await getOk('/v1/jewellery?weight=999999.9999&making_percent=0&profit_percent=0&vat_percent=0');
      // gold: 999,999.9999 × 72,345,678
      assertFigures(response.body, { weight: '999999.9999', gold: '72345677992765.4322' });
    });

    it('in toman: computed from the gram price ÷ 10, the total rounded to a whole toman', async () => {
      const response = await get('/v1/jewellery?weight=3.5&making_percent=18&unit=toman');
      const body = response.body;
      // The total 32,635,207.691478 rounded half up.
      assertFigures(body, { gram_price: '7234567.8', gold: '25320987.3', making: '4557777.714', profit: '2091513.55098', vat: '664929.126498', total: '32635208' });
      assert.equal(json(response).currency, 'IRT');
      assert.ok(body.includes('"key":"gold_18k","title":'), body);
      assert.ok(body.includes('"value":7234567.8,"unit":"تومان/گرم","currency":"IRT"'), body);
      assertMatches(JewelleryResponse, json(response));
    });

    it('rounds a total of exactly half up, not to even: 1 g of 24k at 9,646,090.5 toman', async () => {
      const response = await get('/v1/jewellery?weight=1&karat=24&making_percent=0&profit_percent=0&vat_percent=0&unit=toman');
      assertFigures(response.body, { gold: '9646090.5', total: '9646091' });
    });

    it('each karat reads its own gram price; a stale one is used and says so', async () => {
      const k21 = await get('/v1/jewellery?weight=2&karat=21&making_percent=12.5&profit_percent=5&vat_percent=9');
      // gold 168,806,582; making 21,100,822.75; profit 9,495,370.2375; vat 2,753,657.368875; total 202,156,432.356375.
      assertFigures(k21.body, { gold: '168806582', making: '21100822.75', profit: '9495370.2375', vat: '2753657.368875', total: '202156432' });
      const k22 = await getOk('/v1/jewellery?weight=1&karat=22&making_percent=0');
      const rate = (json(k22).rates as Record<string, unknown>[])[0]!;
      assert.equal(rate.key, 'gold_22k');
      assert.equal(rate.status, 'stale');
      assert.ok(Number(rate.stale_seconds) >= 290, String(rate.stale_seconds));
      assert.equal(field(k22.body, 'gold'), '88422496');
    });

    refusesEach('/v1/jewellery', [
      ['making_percent=10', 'weight'],
      ['weight=1', 'making_percent'],
      ['', 'weight'],
      ['weight=&making_percent=1', 'weight'],
      ['weight=0&making_percent=1', 'weight'],
      ['weight=-3&making_percent=1', 'weight'],
      ['weight=abc&making_percent=1', 'weight'],
      ['weight=NaN&making_percent=1', 'weight'],
      ['weight=1.23456&making_percent=1', 'weight'],
      ['weight=1234567&making_percent=1', 'weight'],
      ['weight=999999.99999&making_percent=1', 'weight'],
      ['weight=1&karat=19&making_percent=1', 'karat'],
      ['weight=1&making_percent=100.5', 'making_percent'],
      ['weight=1&making_percent=-1', 'making_percent'],
      ['weight=1&making_percent=1&profit_percent=1.00001', 'profit_percent'],
      ['weight=1&making_percent=1&vat_percent=', 'vat_percent'],
      ['weight=1&making_percent=1&vat_percent=1e1', 'vat_percent'],
      ['weight=1&making_percent=1&unit=usd', 'unit'],
      ['weight=1&making_percent=1&carat=18', 'carat'],
    ]);

    it('a karat outside the plan is refused as a reference outside it', async () => {
      const { key: narrow } = await harness.keyFor('gold-18-only', 'enterprise', { references: ['gold_18k'] });
      const response = await harness.app.inject({ url: '/v1/jewellery?weight=1&karat=24&making_percent=0', headers: { 'x-api-key': narrow } });
      assertError(response, 403, 'REFERENCE_NOT_IN_PLAN', /./);
      const allowed = await harness.app.inject({ url: '/v1/jewellery?weight=1&making_percent=0', headers: { 'x-api-key': narrow } });
      assert.equal(allowed.statusCode, 200, allowed.body);
    });
  });
});

function assertError(response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, code: string, message: RegExp) {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['cache-control'], 'no-store');
  const body = json(response);
  assert.deepEqual(Object.keys(body), ['success', 'status', 'generated_at', 'error', 'message', 'request_id']);
  assert.equal(body.success, false);
  assert.equal(body.error, code);
  assert.match(String(body.message), message);
}
