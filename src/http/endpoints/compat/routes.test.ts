/**
 * The drop-in routes for navasan and BrsApi clients over real HTTP, against a
 * real file source and store on an injected clock: each answers in its peer's
 * shape with exact values in the peer's unit (half tomans, thousands of toman
 * with decimals, integers past 2^53), a narrow plan sees only its items, a
 * bad or missing key gets 401 in Nerkh's envelope, ETag/304 works,
 * ohlcSearch reads Jalali and unix bounds alike within the plan's window,
 * the change since the previous close is exact in the peer's unit,
 * usage agrees with /v1/usage, and no key is ever logged.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { ManualClock } from '../../../domain/clock.js';
import type { StoredCandle } from '../../../domain/candle.js';
import { ErrorSchema } from '../../schemas.js';
import { BrsapiMarketResponse } from './brsapi-gold-currency/schema.js';
import { NavasanLatestResponse } from './navasan-latest/schema.js';
import { NavasanOhlcResponse } from './navasan-ohlc-search/schema.js';
import { NavasanUsageResponse } from './navasan-usage/schema.js';
import { API_SCHEMAS } from '../registry.js';
import { eventually, writeRaw } from '../../../../test/support/env.js';
import { startHarness, type Harness } from '../../../../test/support/harness.js';

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
  assert.ok(Value.Check(schema, API_SCHEMAS, body), `does not match ${schema.$id}: ${JSON.stringify([...Value.Errors(schema, API_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
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
  let shallow: string;
  /** The log, as the server writes it at level info. */
  let log = '';

  const get = async (path: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(base + path, { headers });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        log += chunk.toString();
        done();
      },
    });
    harness = await startHarness({ withoutBands: true, runtime: { clock, logger: pino({ level: 'info' }, sink) } });
    for (const source of harness.config.sources) writeRaw(source.path!, SOURCE);
    key = (await harness.keyFor('shop', 'enterprise')).key;
    narrow = (await harness.keyFor('kiosk', 'pro', { references: ['usd_free', 'coin_emami'], overrides: { refresh_interval_seconds: 0 } })).key;
    shallow = (await harness.keyFor('pocket', 'pro', { overrides: { history_days: 3 } })).key;
    // Five days of daily candles of usd_free, 1405/09/01 to 1405/09/05, in rial with digits a float would lose.
    const rows: StoredCandle[] = [];
    for (let day = 0; day < 5; day++) {
      const start = Date.parse('2026-11-21T20:30:00Z') + day * 86_400_000;
      rows.push({ grain: 'day', reference: 'usd_free', candle: { start, open: `${1234565 + day * 10}`, high: `123456789012345678${day}1`, low: `1234500.5`, close: `${1234567 + day}`, points: 10, source: 'alpha', closeAt: start + 86_000_000 } });
    }
    await harness.store.history.write(rows);
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
      assert.ok(['usd', 'usd_sell', 'sekkeh', 'abshodeh', '18ayar', 'usdt', 'ons', 'usd_btc'].every((item) => item in every), '[\'usd\', \'usd_sell\', \'sekkeh\', \'abshodeh\', \'18ayar\', \'usdt\', \'ons\', \'usd_btc\'].every((item) => item in every)');
    });

    it('answers If-None-Match with 304', async () => {
      const path = `/compat/navasan/latest/?api_key=${key}`;
      const first = await get(path);
      const etag = first.headers.get('etag')!;
      assert.ok(etag, 'etag');
      assert.match(first.headers.get('cache-control')!, /^private, max-age=\d+$/);
      const again = await get(path, { 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');    });

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
      assert.ok(answer.text.includes('"symbol":"IR_COIN_EMAMI","name_en":"Emami coin","name":"سکه امامی","price":123456789.1,'), 'answer.text.includes(\'"symbol":"IR_COIN_EMAMI","name_en":"Emami coin","name":"سکه امامی","price":123456789.1,\')');
      assert.ok(answer.text.includes('"symbol":"IR_GOLD_MELTED","name_en":"Melted gold (mithqal)","name":"طلای آب‌شده","price":45678901.25,'), 'answer.text.includes(\'"symbol":"IR_GOLD_MELTED","name_en":"Melted gold (mithqal)","name":"طلای آب‌شده","price":45678901.25,\')');
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

    it('ETag/304, gzip, and 401 in the envelope without a key', async () => {
      const path = `/compat/brsapi/Api/Market/Gold_Currency.php?key=${key}`;
      const first = await get(path);
      const again = await get(path, { 'if-none-match': first.headers.get('etag')! });
      assert.equal(again.status, 304);
      const gzipped = await get(path, { 'accept-encoding': 'gzip' });
      assert.equal(gzipped.headers.get('content-encoding'), 'gzip', 'a body over 1 KB goes out compressed when asked');
      assert.equal(gzipped.text, first.text, 'the same body, decompressed');
      const missing = await get('/compat/brsapi/Api/Market/Gold_Currency.php');
      assert.equal(missing.status, 401);
      assert.equal((JSON.parse(missing.text) as Record<string, unknown>).error, 'API_KEY_MISSING');
    });
  });

  describe('navasan /ohlcSearch/', () => {
    const candles = async (query: string, apiKey = key) => {
      const answer = await get(`/compat/navasan/ohlcSearch/?api_key=${apiKey}&${query}`);
      assert.equal(answer.status, 200, answer.text);
      assertMatches(NavasanOhlcResponse, JSON.parse(answer.text));
      return answer;
    };

    it('answers daily candles in navasan\'s shape, exact strings in toman, for Jalali bounds', async () => {
      const answer = await candles('item=usd&start=1405-09-02&end=1405-09-04');
      assert.deepEqual(JSON.parse(answer.text), [
        { timestamp: Date.parse('2026-11-22T20:30:00Z') / 1000, date: '1405-09-02', open: '123457.5', high: '1234567890123456781.1', low: '123450.05', close: '123456.8' },
        { timestamp: Date.parse('2026-11-23T20:30:00Z') / 1000, date: '1405-09-03', open: '123458.5', high: '1234567890123456782.1', low: '123450.05', close: '123456.9' },
        { timestamp: Date.parse('2026-11-24T20:30:00Z') / 1000, date: '1405-09-04', open: '123459.5', high: '1234567890123456783.1', low: '123450.05', close: '123457' },
      ]);
    });

    it('reads unix seconds, Persian digits and Jalali dates with slashes as the same days', async () => {
      const jalali = (await candles('item=usd&start=1405-09-02&end=1405-09-04')).text;
      const unix = `start=${Date.parse('2026-11-22T20:30:00Z') / 1000}&end=${Date.parse('2026-11-24T21:00:00Z') / 1000}`;
      assert.equal((await candles(`item=usd&${unix}`)).text, jalali);
      assert.equal((await candles(`item=usd&start=${encodeURIComponent('۱۴۰۵-۰۹-۰۲')}&end=1405/09/04`)).text, jalali);
    });

    it('applies the plan\'s history window, and refuses unknown and out-of-plan items in the envelope', async () => {
      const refused = await get(`/compat/navasan/ohlcSearch?api_key=${shallow}&item=usd&start=1405-09-01&end=1405-09-05`);
      assert.equal(refused.status, 403, refused.text);
      assert.equal((JSON.parse(refused.text) as Record<string, unknown>).error, 'HISTORY_WINDOW_EXCEEDED');
      assert.deepEqual(JSON.parse((await candles('item=usd&start=1405-09-05&end=1405-09-05', shallow)).text).length, 1);
      const unknown = await get(`/compat/navasan/ohlcSearch/?api_key=${key}&item=nonsense&start=1405-09-01&end=1405-09-05`);
      assert.equal(unknown.status, 404);
      const denied = await get(`/compat/navasan/ohlcSearch/?api_key=${narrow}&item=18ayar&start=1405-09-01&end=1405-09-05`);
      assert.equal((JSON.parse(denied.text) as Record<string, unknown>).error, 'REFERENCE_NOT_IN_PLAN');
      const bad = await get(`/compat/navasan/ohlcSearch/?api_key=${key}&item=usd&start=yesterday&end=1405-09-05`);
      assert.equal(bad.status, 400);
      assert.match(String((JSON.parse(bad.text) as Record<string, unknown>).message), /"start"/);
    });

    it('answers If-None-Match with 304', async () => {
      const first = await candles('item=usd&start=1405-09-01&end=1405-09-05');
      const again = await get(`/compat/navasan/ohlcSearch/?api_key=${key}&item=usd&start=1405-09-01&end=1405-09-05`, { 'if-none-match': first.headers.get('etag')! });
      assert.equal(again.status, 304);
    });
  });

  describe('navasan /usage/', () => {
    it('counts this month, day and hour as /v1/usage counts them', async () => {
      const account = (await harness.keyFor('counted', 'pro')).key;
      for (let i = 0; i < 7; i++) assert.equal((await get(`/compat/navasan/latest/?api_key=${account}&item=usd`)).status, 200);
      assert.equal((await get(`/compat/navasan/latest/?api_key=${account}&item=usd&bogus=1`)).status, 400);
      const usage = async () => {
        const answer = await get(`/compat/navasan/usage/?api_key=${account}`);
        assert.equal(answer.status, 200, answer.text);
        const body = JSON.parse(answer.text) as { monthly_usage: number; daily_usage: number; hourly_usage: number };
        assertMatches(NavasanUsageResponse, body);
        return body;
      };
      // Asked together, both answers come from one read of the store (src/http/endpoints/usage/reports.ts): they must say the same.
      const [counts, reportAnswer] = await Promise.all([usage(), get('/v1/usage?days=31', { 'x-api-key': account })]);
      const report = JSON.parse(reportAnswer.text) as { daily: { date: string; requests: number }[] };
      const today = report.daily.find((day) => day.date === '2026-11-28')!.requests;
      const month = report.daily.filter((day) => day.date.startsWith('2026-11')).reduce((sum, day) => sum + day.requests, 0);
      assert.deepEqual(counts, { monthly_usage: month, daily_usage: today, hourly_usage: today });
      assert.equal(today, 8, 'every request so far, the refused one too');
    });
  });

  describe('stale values', () => {
    it('are served, and named in x-nerkh-stale-items', async () => {
      // Past the sources' max age (300 s): every value turns stale at the engine's next tick.
      clock.advance(400_000);
      const answer = await eventually(async () => {
        const seen = await get(`/compat/navasan/latest/?api_key=${key}&item=usd,sekkeh`);
        return seen.headers.get('x-nerkh-stale-items') === null ? null : seen;
      }, 5000);
      assert.ok(answer, 'answer');
      assert.equal(answer.headers.get('x-nerkh-stale-items'), 'usd,sekkeh');
      assert.deepEqual(Object.keys(JSON.parse(answer.text) as object), ['usd', 'sekkeh']);
      const market = await get(`/compat/brsapi/Api/Market/Gold_Currency.php?key=${narrow}`);
      assert.equal(market.headers.get('x-nerkh-stale-items'), 'IR_COIN_EMAMI,USD');
    });
  });

  describe('change since the previous close', () => {
    it('is exact in the peer\'s unit once a new market day has a new value', async () => {
      // The next day in Tehran (Sunday 1405/09/08, 10:00): the last value of the day before becomes the previous close.
      const nextDay = Date.parse('2026-11-29T06:30:00Z');
      clock.set(nextDay);
      const moved = SOURCE.replace(new Date(UPDATED).toISOString(), new Date(nextDay).toISOString())
        .replace('"ir_fx_free_usd": 1234565', '"ir_fx_free_usd": 1299999')
        .replace('"ir_coin_emami": 1234567891', '"ir_coin_emami": 1234577891');
      for (const source of harness.config.sources) writeRaw(source.path!, moved);
      const answer = (await eventually(async () => {
        const seen = await get(`/compat/navasan/latest/?api_key=${key}&item=usd,sekkeh`);
        return (JSON.parse(seen.text) as { usd?: { value: string } }).usd?.value === '129999.9' ? seen : null;
      }, 5000))!;
      // 1,299,999 − 1,234,565 rial = 65,434 rial: 6,543.4 toman; the coin moved 10,000 rial: 1 thousand toman. Written as the exact digits.
      assert.match(answer.text, /"usd":\{"value":"129999\.9","change":6543\.4,/);
      assert.match(answer.text, /"sekkeh":\{"value":"123457\.7891","change":1,/);
      const market = await get(`/compat/brsapi/Api/Market/Gold_Currency.php?key=${key}`);
      const usd = (JSON.parse(market.text) as { currency: { symbol: string; price: number; change_value: number; change_percent: number }[] }).currency.find((item) => item.symbol === 'USD')!;
      // 65,434 ÷ 1,234,565 = 5.30 %.
      assert.deepEqual([usd.price, usd.change_value, usd.change_percent], [129999.9, 6543.4, 5.3]);
    });
  });

  describe('the log', () => {
    it('never holds a key, in either peer\'s parameter, good or bad', async () => {
      // The log lines of the requests above are written when each finishes.
      await eventually(() => log.includes('/compat/brsapi/Market/Gold_Currency.php'), 3000);
      assert.ok(log.includes('/compat/navasan/latest/?api_key=[redacted]'), 'the requests are logged');
      for (const secret of [key, narrow, shallow, 'nrk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'api_key=wrong']) assert.ok(!log.includes(secret), `${secret} in the log`);
      assert.ok(!/key=nrk_/.test(log), '!/key=nrk_/.test(log)');
    });
  });
});
