/**
 * The drop-in routes for navasan and BrsApi clients over real HTTP, against a
 * real file source and store on an injected clock: each answers in its peer's
 * shape with exact values in the peer's unit (half tomans, thousands of toman
 * with decimals, integers past 2^53), a narrow plan sees only its items, a
 * bad or missing key gets 401 in Nerkh's envelope, and ETag/304 works.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { ManualClock } from '../../src/domain/clock.js';
import { BrsapiMarketResponse, ErrorSchema, NavasanLatestResponse, SHARED_SCHEMAS } from '../../src/http/schemas.js';
import { writeRaw } from '../support/env.js';
import { eventually } from '../support/env.js';
import { startHarness, type Harness } from '../support/harness.js';

/** 2026-11-28 12:59:03 UTC: 16:29:03 in Tehran, 1405/09/07. */
const UPDATED = Date.parse('2026-11-28T12:59:03Z');

/** Source values as number text, so no float ever touches them (the source reads numbers losslessly). */
const SOURCE = `{"updated_at":"${new Date(UPDATED).toISOString()}","items":{
  "ir_fx_free_usd": 1234565,
  "ir_fx_free_usd_sell": 1234567,
  "ir_coin_emami": 1234567891,
  "ir_gold_melted_cash_mithqal": 456789012.5,
  "ir_gold_18k_gram": 100000005,
  "ir_crypto_usdt_irr": 123456789012345678901,
  "intl_xau_usd_spot": 4000.25,
  "crypto_btc_usd": 98765.4321
}}`;

function assertMatches(schema: TSchema, body: unknown) {
  assert.ok(Value.Check(schema, SHARED_SCHEMAS, body), `does not match ${schema.$id}: ${JSON.stringify([...Value.Errors(schema, SHARED_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

describe('compatibility routes (navasan, BrsApi)', () => {
  const clock = new ManualClock(UPDATED + 60_000);
  let harness: Harness;
  let base: string;
  let key: string;
  let narrow: string;

  const get = async (path: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(base + path, { headers });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };

  before(async () => {
    harness = await startHarness({ withoutBands: true, runtime: { clock } });
    for (const source of harness.config.sources) writeRaw(source.path!, SOURCE);
    key = (await harness.keyFor('shop', 'enterprise')).key;
    narrow = (await harness.keyFor('kiosk', 'pro', { references: ['usd_free', 'coin_emami'], overrides: { refresh_interval_seconds: 0 } })).key;
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    // The source is read: the half toman is served.
    await eventually(async () => (await get(`/compat/navasan/latest/?api_key=${key}&item=usd`)).text.includes('123456.5'), 5000);
  });
  after(() => harness.close());

  describe('navasan /latest/', () => {
    it('answers in navasan\'s shape, exact in its units: toman, thousands of toman, dollars', async () => {
      const answer = await get(`/compat/navasan/latest/?api_key=${key}&item=usd,usd_sell,sekkeh,abshodeh,18ayar,usdt,ons,usd_btc`);
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.headers.get('content-type')!, /^application\/json/);
      const body = JSON.parse(answer.text) as Record<string, { value: string; change: number | null; timestamp: number; date: string }>;
      assertMatches(NavasanLatestResponse, body);
      assert.deepEqual(Object.keys(body), ['usd', 'usd_sell', 'sekkeh', 'abshodeh', '18ayar', 'usdt', 'ons', 'usd_btc'], 'request order');
      assert.deepEqual(
        Object.fromEntries(Object.entries(body).map(([item, entry]) => [item, entry.value])),
        {
          usd: '123456.5',
          usd_sell: '123456.7',
          sekkeh: '123456.7891',
          abshodeh: '45678.90125',
          '18ayar': '10000000.5',
          // Past 2^53: a string keeps every digit.
          usdt: '12345678901234567890.1',
          ons: '4000.25',
          usd_btc: '98765.4321',
        },
      );
      assert.deepEqual({ ...body.usd, value: undefined }, { value: undefined, change: null, timestamp: UPDATED / 1000, date: '1405-09-07 16:29:03' });
      for (const name of ['x-nerkh-unknown-items', 'x-nerkh-denied-items', 'x-nerkh-unavailable-items', 'x-nerkh-stale-items']) assert.equal(answer.headers.get(name), null, name);
    });

    it('takes the path without its trailing slash, names in any case, each once', async () => {
      const answer = await get(`/compat/navasan/latest?api_key=${key}&item=USD,%20usd`);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(Object.keys(JSON.parse(answer.text) as object), ['usd']);
    });

    it('leaves out unknown, unavailable and out-of-plan items, naming them in headers exposed to browsers', async () => {
      const answer = await get(`/compat/navasan/latest/?api_key=${narrow}&item=usd,nonsense,sekkeh,18ayar,eur`, { origin: 'https://shop.example' });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(Object.keys(JSON.parse(answer.text) as object), ['usd', 'sekkeh']);
      assert.equal(answer.headers.get('x-nerkh-unknown-items'), 'nonsense');
      assert.equal(answer.headers.get('x-nerkh-denied-items'), '18ayar,eur');
      const exposed = answer.headers.get('access-control-expose-headers')!.toLowerCase();
      for (const name of ['x-nerkh-unknown-items', 'x-nerkh-denied-items', 'x-nerkh-unavailable-items', 'x-nerkh-stale-items']) assert.ok(exposed.includes(name), name);
      const unavailable = await get(`/compat/navasan/latest/?api_key=${key}&item=usd,gbp`);
      assert.deepEqual(Object.keys(JSON.parse(unavailable.text) as object), ['usd']);
      assert.equal(unavailable.headers.get('x-nerkh-unavailable-items'), 'gbp');
    });

    it('without item: every mapped item the plan allows that has a value', async () => {
      const all = JSON.parse((await get(`/compat/navasan/latest/?api_key=${narrow}`)).text) as object;
      assert.deepEqual(Object.keys(all), ['usd', 'sekkeh']);
      const every = JSON.parse((await get(`/compat/navasan/latest/?api_key=${key}`)).text) as object;
      assert.ok(['usd', 'usd_sell', 'sekkeh', 'abshodeh', '18ayar', 'usdt', 'ons', 'usd_btc'].every((item) => item in every));
    });

    it('answers If-None-Match with 304, and gzip when asked', async () => {
      const path = `/compat/navasan/latest/?api_key=${key}`;
      const first = await get(path);
      const etag = first.headers.get('etag')!;
      assert.ok(etag);
      assert.match(first.headers.get('cache-control')!, /^private, max-age=\d+$/);
      const again = await get(path, { 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
    });

    it('refuses a missing or bad key with 401 in the envelope, and a bad item list with 400', async () => {
      for (const [path, code] of [
        ['/compat/navasan/latest/?item=usd', 'API_KEY_MISSING'],
        ['/compat/navasan/latest/?api_key=nrk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&item=usd', 'API_KEY_INVALID'],
        ['/compat/navasan/latest?api_key=wrong', 'API_KEY_INVALID'],
      ] as const) {
        const answer = await get(path);
        assert.equal(answer.status, 401, answer.text);
        const body = JSON.parse(answer.text) as Record<string, unknown>;
        assertMatches(ErrorSchema, body);
        assert.equal(body.error, code);
      }
      const bad = await get(`/compat/navasan/latest/?api_key=${key}&item=usd%0D%0Ax-evil:1`);
      assert.equal(bad.status, 400);
      assert.equal((JSON.parse(bad.text) as Record<string, unknown>).error, 'INVALID_PARAMETER');
    });
  });

  describe('BrsApi Gold_Currency.php', () => {
    it('answers in BrsApi\'s shape: toman and dollar prices as exact JSON numbers', async () => {
      const answer = await get(`/compat/brsapi/Api/Market/Gold_Currency.php?key=${key}`);
      assert.equal(answer.status, 200, answer.text);
      const body = JSON.parse(answer.text) as Record<'gold' | 'currency' | 'cryptocurrency', Record<string, unknown>[]>;
      assertMatches(BrsapiMarketResponse, body);
      const usd = body.currency.find((item) => item.symbol === 'USD')!;
      assert.deepEqual(usd, {
        date: '1405/09/07',
        time: '16:29',
        time_unix: UPDATED / 1000,
        symbol: 'USD',
        name_en: 'US dollar',
        name: 'دلار آمریکا',
        price: 123456.5,
        change_value: null,
        change_percent: null,
        unit: 'تومان',
      });
      // The digits as written, not as a float reads them back.
      assert.ok(answer.text.includes('"symbol":"USDT_IRT","name_en":"Tether","name":"تتر","price":12345678901234567890.1,'), 'an integer part past 2^53 is written whole');
      assert.ok(answer.text.includes('"symbol":"IR_COIN_EMAMI","name_en":"Emami coin","name":"سکه امامی","price":123456789.1,'));
      assert.ok(answer.text.includes('"symbol":"IR_GOLD_MELTED","name_en":"Melted gold (mithqal)","name":"طلای آب‌شده","price":45678901.25,'));
      assert.deepEqual(
        body.gold.filter((item) => item.symbol === 'XAUUSD').map((item) => [item.price, item.unit]),
        [[4000.25, 'دلار']],
      );
      assert.deepEqual(
        body.cryptocurrency.map((item) => [item.symbol, item.price]),
        [['BTC', 98765.4321]],
      );
      assert.match(answer.headers.get('x-nerkh-unavailable-items')!, /(^|,)GBP(,|$)/);
    });

    it('answers without Api/ too, and only the plan\'s references for a narrow plan', async () => {
      const answer = await get(`/compat/brsapi/Market/Gold_Currency.php?key=${narrow}`);
      assert.equal(answer.status, 200, answer.text);
      const body = JSON.parse(answer.text) as Record<string, { symbol: string }[]>;
      assert.deepEqual(
        Object.values(body).flatMap((items) => items.map((item) => item.symbol)),
        ['IR_COIN_EMAMI', 'USD'],
      );
      assert.match(answer.headers.get('x-nerkh-denied-items')!, /(^|,)IR_GOLD_18K(,|$)/);
    });

    it('ETag/304, and 401 in the envelope without a key', async () => {
      const path = `/compat/brsapi/Api/Market/Gold_Currency.php?key=${key}`;
      const first = await get(path);
      const again = await get(path, { 'if-none-match': first.headers.get('etag')! });
      assert.equal(again.status, 304);
      const missing = await get('/compat/brsapi/Api/Market/Gold_Currency.php');
      assert.equal(missing.status, 401);
      assert.equal((JSON.parse(missing.text) as Record<string, unknown>).error, 'API_KEY_MISSING');
    });
  });
});
