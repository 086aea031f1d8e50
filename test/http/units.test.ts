import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { DetailResponse } from '../../src/http/endpoints/detail/schema.js';
import { API_SCHEMAS } from '../../src/http/endpoints/registry.js';
import { WebserviceResponse } from '../../src/http/endpoints/webservice/schema.js';
import { json, startHarness, type Harness } from '../support/harness.js';
import { eventually, tempDir, writeRaw } from '../support/env.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { HistoryResponse } from '../../src/http/endpoints/history/schema.js';
import { openStream, ratesOf } from '../stream/sse-client.js';

function assertMatches(schema: TSchema, body: unknown) {
  assert.ok(Value.Check(schema, API_SCHEMAS, body), `${schema.$id}: ${JSON.stringify([...Value.Errors(schema, API_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
}

/** Three bundled references without their sanity bands: these tests are about digits, not plausibility. */
function smallCatalogue(dir: string): string {
  const wanted = new Set(['coin_emami', 'usd_free', 'gold_ounce', 'jpy_free']);
  const references = ['coin.json', 'currency.json', 'gold.json']
    .flatMap((file) => JSON.parse(readFileSync(join(BUNDLED_CATALOGUE, file), 'utf8')) as Record<string, unknown>[])
    .filter((reference) => wanted.has(reference.key as string))
    .map(({ min: _min, max: _max, ...reference }) => reference);
  const path = join(dir, 'catalogue.json');
  writeFileSync(path, JSON.stringify(references));
  return path;
}

/** Body text without the time it was generated, to compare two answers digit for digit. */
const timeless = (body: string) => body.replace(/"generated_at":"[^"]+","server_time":\d+|"generated_at":"[^"]+"/, '');

describe('units: rial and toman, currency, per, Jalali time', () => {
  let harness: Harness;
  let key: string;
  let base: string;
  const get = (url: string) => harness.app.inject({ url, headers: { 'x-api-key': key } });
  const dir = tempDir();
  const writeItems = (items: string) => writeRaw(harness.config.sources[0]!.path!, `{"updated_at":"${new Date().toISOString()}","items":{${items}}}`);

  before(async () => {
    harness = await startHarness({ config: { cataloguePath: smallCatalogue(dir.path) } });
    ({ key } = await harness.keyFor('units-board', 'enterprise'));
    // Digits a float would lose, a decimal smaller than one, and a price in dollars with a trailing zero.
    writeItems('"ir_coin_emami":1103120725,"ir_fx_free_usd":123456789012345678,"ir_fx_free_jpy":0.3,"intl_xau_usd_spot":4000.50');
    await eventually(async () => (await get('/v1/rates/usd_free')).body.includes('123456789012345678'), 4000);
    // Listening until the harness closes the app.
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await harness.close();
    dir.cleanup();
  });

  it('divides rial prices by ten exactly, says toman and IRT, and leaves other currencies alone', async () => {
    const response = await get('/v1/rates/coin_emami,usd_free,jpy_free,gold_ounce?unit=toman');
    assert.equal(response.statusCode, 200, response.body);
    const body = response.body;
    assert.ok(body.includes('"value":110312072.5,"unit":"تومان/سکه","currency":"IRT","per":"coin"'), body);
    assert.ok(body.includes('"value":12345678901234567.8,"unit":"تومان/دلار","currency":"IRT","per":"unit"'), body);
    assert.ok(body.includes('"value":0.03,"unit":"تومان/۱۰۰ ین","currency":"IRT","per":"100 units"'), body);
    assert.ok(body.includes('"value":4000.50,"unit":"دلار/اونس","currency":"USD","per":"ounce"'), body);
    assertMatches(DetailResponse, json(response));
    // The market day's amounts are divided too; its percentage is a ratio and is not.
    const rates = json(response).rates as Record<string, unknown>[];
    const emami = JSON.stringify(rates[0]);
    assert.match(emami, /"day_open":\d+(\.\d)?,"day_high":110312072\.5,"day_low":\d+(\.\d)?,"prev_close":null,"change":null,"change_percent":null,"market":\{"name":"tehran",[^}]*\}\}$/, emami);
    assert.ok(body.includes('"day_high":12345678901234567.8,'), body);
    const rialDay = json(await get('/v1/rates/coin_emami')).rates as Record<string, string>[];
    assert.equal(Number(rates[0]!.day_low) * 10, Number(rialDay[0]!.day_low), 'day_low in toman is a tenth of day_low in rial');
  });

  it('serves rial by default and for ?unit=rial, the same bytes and ETag', async () => {
    const plain = await get('/v1/rates/coin_emami,usd_free');
    const rial = await get('/v1/rates/coin_emami,usd_free?unit=rial');
    assert.equal(timeless(rial.body), timeless(plain.body));
    assert.equal(rial.headers.etag, plain.headers.etag);
    assert.ok(plain.body.includes('"value":1103120725,"unit":"ریال/سکه","currency":"IRR","per":"coin"'), 'plain.body.includes(\'"value":1103120725,"unit":"ریال/سکه","currency":"IRR","per":"coin"\')');
    const toman = await get('/v1/rates/coin_emami,usd_free?unit=toman');
    assert.notEqual(toman.headers.etag, plain.headers.etag);
    assert.equal((await get(`/v1/rates/coin_emami,usd_free?unit=toman`)).headers.etag, toman.headers.etag);
  });

  it('gives every rate updated_at_jalali in the zone', async () => {
    const rates = json(await get('/v1/rates/coin_emami,gold_ounce')).rates as { updated_at: string; updated_at_jalali: string }[];
    for (const rate of rates) {
      assert.match(rate.updated_at_jalali, /^14\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d$/);
      assert.equal(rate.updated_at_jalali.slice(-8), rate.updated_at.slice(11, 19), 'the same local time as updated_at');
    }
  });

  it('answers ?unit=toman the same on the raw path as through the route', async () => {
    {
      const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { hostname, port } = new URL(base);
        request({ host: hostname, port, path: '/v1/rates/coin_emami,usd_free?unit=toman', headers: { 'x-api-key': key } }, (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: text }));
        })
          .on('error', reject)
          .end();
      });
      assert.equal(raw.status, 200);
      assert.equal(timeless(raw.body), timeless((await get('/v1/rates/coin_emami,usd_free?unit=toman')).body));
      assert.ok(raw.body.includes('"value":12345678901234567.8,'), 'raw.body.includes(\'"value":12345678901234567.8,\')');
    }
  });

  it('the webservice feed takes ?unit=toman too', async () => {
    // Live (no refresh interval), so the feed shows the values written above.
    const { key: own } = await harness.keyFor('units-feed', 'pro', { references: ['coin_emami', 'gold_ounce'], overrides: { refresh_interval_seconds: 0 } });
    const toman = await harness.app.inject({ url: '/webservice/units-feed?unit=toman', headers: { 'x-api-key': own } });
    assert.equal(toman.statusCode, 200, toman.body);
    assert.ok(toman.body.includes('"coin_emami":{"title":"سکه امامی","value":110312072.5,"unit":"تومان/سکه","currency":"IRT","per":"coin"'), toman.body);
    assert.ok(toman.body.includes('"value":4000.50,"unit":"دلار/اونس","currency":"USD","per":"ounce"'), 'toman.body.includes(\'"value":4000.50,"unit":"دلار/اونس","currency":"USD","per":"ounce"\')');
    assertMatches(WebserviceResponse, json(toman));
    const rial = await harness.app.inject({ url: '/webservice/units-feed', headers: { 'x-api-key': own } });
    assert.ok(rial.body.includes('"value":1103120725,"unit":"ریال/سکه","currency":"IRR"'), 'rial.body.includes(\'"value":1103120725,"unit":"ریال/سکه","currency":"IRR"\')');
    assert.notEqual(rial.headers.etag, toman.headers.etag);
  });

  it('history takes ?unit=toman: every candle value divided exactly, and the label and currency say so', async () => {
    const time = new ZoneTime('Asia/Tehran');
    const buckets = new Buckets(time);
    const yesterday = buckets.back(buckets.start(Date.now(), '1d'), '1d', 1);
    const candle = { start: yesterday, open: '1103120725', high: '123456789012345678', low: '0.3', close: '300.50', points: 3, source: 'alpha', closeAt: yesterday + 1000 };
    await harness.store.history.write([
      { grain: 'day', reference: 'coin_emami', candle },
      { grain: 'day', reference: 'gold_ounce', candle: { ...candle, open: '4000.50', high: '4000.50', low: '4000.50', close: '4000.50' } },
    ]);
    const t = JSON.stringify(time.format(yesterday));
    const rial = await get('/v1/rates/coin_emami/history?interval=1d');
    const toman = await get('/v1/rates/coin_emami/history?interval=1d&unit=toman');
    assert.equal(toman.statusCode, 200, toman.body);
    assert.ok(rial.body.includes(`{"t":${t},`) && rial.body.includes('"open":1103120725,"high":123456789012345678,"low":0.3,"close":300.50,"points":3}'), rial.body);
    assert.ok(toman.body.includes('"open":110312072.5,"high":12345678901234567.8,"low":0.03,"close":30.05,"points":3}'), toman.body);
    assert.ok(toman.body.includes('"unit":"تومان/سکه","currency":"IRT","per":"coin"'), toman.body);
    assertMatches(HistoryResponse, json(toman));
    assert.notEqual(toman.headers.etag, rial.headers.etag);
    // Asked again: the cached toman block, the same bytes.
    assert.equal(timeless((await get('/v1/rates/coin_emami/history?interval=1d&unit=toman')).body), timeless(toman.body));
    // A price in dollars is the same in either unit.
    const ounce = await get('/v1/rates/gold_ounce/history?interval=1d&unit=toman');
    assert.equal(timeless(ounce.body), timeless((await get('/v1/rates/gold_ounce/history?interval=1d')).body));
    assert.ok(ounce.body.includes('"currency":"USD"') && ounce.body.includes('"close":4000.50'), 'ounce.body.includes(\'"currency":"USD"\') && ounce.body.includes(\'"close":4000.50\')');
    // ?at= (values as served then, from history) takes the unit too.
    const date = buckets
      .localDate(yesterday)
      .map((part) => String(part).padStart(2, '0'))
      .join('-');
    const at = await get(`/v1/rates/coin_emami,gold_ounce?at=${date}&unit=toman`);
    assert.equal(at.statusCode, 200, at.body);
    assert.ok(at.body.includes('"value":30.05,"unit":"تومان/سکه","currency":"IRT","per":"coin"'), at.body);
    assert.ok(at.body.includes('"value":4000.50,"unit":"دلار/اونس","currency":"USD"'), at.body);
    assert.ok((await get(`/v1/rates/coin_emami?at=${date}`)).body.includes('"value":300.50,"unit":"ریال/سکه","currency":"IRR"'), '(await get(`/v1/rates/coin_emami?at=${date}`)).body.includes(\'"value":300.50,"unit":"ریال/سکه","currency":"IRR"\')');
  });

  it('the stream takes ?unit=toman: its snapshot and change events carry toman rates', async () => {
    const toman = await openStream(base, '/v1/stream?keys=coin_emami,gold_ounce&unit=toman', { 'x-api-key': key });
    const rial = await openStream(base, '/v1/stream?keys=coin_emami,gold_ounce', { 'x-api-key': key });
    try {
      assert.equal(toman.status, 200, toman.body);
      const first = await toman.event(0);
      assert.ok(first.data.includes('"value":110312072.5,"unit":"تومان/سکه","currency":"IRT"'), first.data);
      assert.ok(first.data.includes('"value":4000.50,"unit":"دلار/اونس","currency":"USD"'), first.data);
      assert.ok((await rial.event(0)).data.includes('"value":1103120725,"unit":"ریال/سکه","currency":"IRR"'), '(await rial.event(0)).data.includes(\'"value":1103120725,"unit":"ریال/سکه","currency":"IRR"\')');
      writeItems('"ir_coin_emami":2206241451,"ir_fx_free_usd":123456789012345678,"ir_fx_free_jpy":0.3,"intl_xau_usd_spot":4000.50');
      const change = await toman.event(1);
      assert.equal(change.event, 'rates');
      assert.equal(ratesOf(change).rates[0]!.key, 'coin_emami');
      assert.ok(change.data.includes('"value":220624145.1,"unit":"تومان/سکه","currency":"IRT"'), change.data);
      assert.doesNotMatch(change.data, /"currency":"IRR"/);
      assert.ok((await rial.event(1)).data.includes('"value":2206241451,'), '(await rial.event(1)).data.includes(\'"value":2206241451,\')');
    } finally {
      toman.close();
      rial.close();
    }
    const bad = await openStream(base, '/v1/stream?unit=tomans', { 'x-api-key': key });
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.body).message, 'Query parameter "unit" must be one of: rial, toman.');
  });

  it('rejects a bad unit or expand value, listing the allowed ones', async () => {
    const { key: own } = await harness.keyFor('units-bad', 'pro');
    const cases: [string, string][] = [
      ['/v1/rates/usd_free?unit=Toman', 'Query parameter "unit" must be one of: rial, toman.'],
      ['/v1/rates/usd_free?unit=', 'Query parameter "unit" must be one of: rial, toman.'],
      ['/v1/rates/usd_free?unit=toman&unit=rial', 'Query parameter "unit" is given more than once.'],
      ['/v1/rates/usd_free?expand=everything', 'Query parameter "expand" must be one of: sources.'],
      ['/v1/rates/usd_free?expand=sources&expand=sources', 'Query parameter "expand" is given more than once.'],
      ['/webservice/units-bad?unit=dollar', 'Query parameter "unit" must be one of: rial, toman.'],
    ];
    for (const [url, message] of cases) {
      const response = await harness.app.inject({ url, headers: { 'x-api-key': own } });
      assert.equal(response.statusCode, 400, url);
      assert.deepEqual([json(response).error, json(response).message], ['INVALID_PARAMETER', message], url);
      assert.equal(response.headers['cache-control'], 'no-store');
    }
    // The key is checked before the query (docs/api.md#order-of-checks).
    assert.equal(json(await harness.app.inject({ url: '/v1/rates/usd_free?unit=nope' })).error, 'API_KEY_MISSING');
  });
});
