/**
 * The market calendar end to end in one process, over the real store and
 * real source files, on a clock the test moves (never the day the suite
 * runs): GET /v1/calendar, honest freshness in detail, the webservice feed
 * and the stream's snapshot, operators' declarations applied, ?at= with the
 * market's state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { ManualClock } from '../../../domain/clock.js';
import { DEFAULT_MARKET_SPECS } from '../../../domain/market-specs.js';
import { CalendarResponse } from './schema.js';
import { DetailResponse } from '../../../http/endpoints/detail/schema.js';
import { API_SCHEMAS } from '../../../http/endpoints/registry.js';
import { eventually, fileSources, tempDir, writeSource } from '../../../../test/support/env.js';
import { json, SAMPLE, startHarness, type Harness } from '../../../../test/support/harness.js';
import { openStream, ratesOf, type SseStream } from '../../../../test/stream/sse-client.js';

/** `eventually` for a check that answers null until it finds what it waits for. */
async function eventuallyFound<T>(check: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  return (await eventually(check, timeoutMs))!;
}

const PRESENTATION_FORMS = /[\uFB50-\uFDFF\uFE70-\uFEFF]/;
/** Thursday 19 November 2026, 23:50 in Tehran: a value is read then. */
const THURSDAY_LATE = Date.parse('2026-11-19T23:50:00+03:30');

interface MarketJson {
  name: string;
  state: 'open' | 'closed';
  reason: string | null;
  reason_fa: string | null;
  opens_at: string | null;
}
interface RateJson {
  key: string;
  status: string;
  stale_seconds?: number;
  market: MarketJson | null;
}

describe('market calendar over HTTP (injected clock, the built-in markets)', () => {
  const clock = new ManualClock(THURSDAY_LATE);
  const dir = tempDir('nerkh-calendar-');
  let harness: Harness;
  let key: string;
  let base: string;
  const streams: SseStream[] = [];
  const get = (url: string, headers: Record<string, string> = {}) => harness.app.inject({ url, headers: { 'x-api-key': key, ...headers } });
  const rates = async (keys: string): Promise<RateJson[]> => {
    const response = await get(`/v1/rates/${keys}`);
    assert.equal(response.statusCode, 200, response.body);
    assert.ok(Value.Check(DetailResponse, API_SCHEMAS, json(response)), response.body.slice(0, 400));
    return json(response).rates as RateJson[];
  };
  const rate = async (name: string) => (await rates(name))[0]!;

  before(async () => {
    // 30 minutes of max age; the dollar (tehran), bitcoin (crypto) and gold's ounce (international) read at Thursday 23:50.
    harness = await startHarness({ config: { markets: [...DEFAULT_MARKET_SPECS], sources: fileSources(dir.path, ['alpha', 'beta'], 30 * 60) }, runtime: { clock } });
    const at = new Date(THURSDAY_LATE).toISOString();
    for (const source of harness.config.sources) {
      writeSource(source.path!, { [SAMPLE.usd_free]: { value: 1_000_000, updated_at: at }, crypto_btc_usd: { value: 90_000, updated_at: at }, intl_xau_usd_spot: { value: 2650, updated_at: at } }, at);
    }
    key = (await harness.keyFor('calendar-reader', 'enterprise')).key;
    await eventually(async () => (await rate('usd_free')).status === 'ok', 5000);
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await harness?.close();
    dir.cleanup();
  });

  it('GET /v1/calendar lists Nowruz and the Fridays of Farvardin 1406, Gregorian and Jalali, with reasons in ordinary letters', async () => {
    const response = await get('/v1/calendar?market=tehran&from=۱۴۰۶/۰۱/۰۱&to=1406/01/31');
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.ok(Value.Check(CalendarResponse, API_SCHEMAS, body), response.body.slice(0, 400));
    assert.equal(body.market, 'tehran');
    assert.equal(body.from, '2027-03-21');
    assert.equal(body.to, '2027-04-20');
    const closed = body.closed as { date: string; date_jalali: string; reason: string; reason_fa: string }[];
    const byJalali = new Map(closed.map((day) => [day.date_jalali, day]));
    for (const day of ['1406/01/01', '1406/01/02', '1406/01/03', '1406/01/04']) {
      assert.match(byJalali.get(day)?.reason ?? '', /Nowruz/, day);
      assert.match(byJalali.get(day)?.reason_fa ?? '', /نوروز/, day);
    }
    assert.equal(byJalali.get('1406/01/01')?.date, '2027-03-21');
    assert.match(byJalali.get('1406/01/12')?.reason ?? '', /Islamic Republic Day/);
    // Fridays of Farvardin 1406: 6, 20, 27 (13 Farvardin, a Friday too, says its holidays).
    for (const day of ['1406/01/06', '1406/01/20', '1406/01/27']) assert.equal(byJalali.get(day)?.reason, 'Friday', day);
    assert.equal(byJalali.get('1406/01/06')?.reason_fa, 'جمعه');
    assert.match(byJalali.get('1406/01/13')?.reason ?? '', /Sizdah Bedar/);
    for (const day of closed) assert.doesNotMatch(day.reason_fa, PRESENTATION_FORMS, day.date);
    assert.equal(byJalali.has('1406/01/05'), false);
    // Dates are in order, one entry each.
    assert.deepEqual(closed.map((day) => day.date), [...new Set(closed.map((day) => day.date))].sort());
    // The same answer again is a 304.
    const again = await get('/v1/calendar?market=tehran&from=1406/01/01&to=1406/01/31', { 'if-none-match': String(response.headers.etag) });
    assert.equal(again.statusCode, 304);
  });

  it('lists weekends and 25 December for international, nothing for crypto, and defaults to a month from today', async () => {
    const international = json(await get('/v1/calendar?market=international&from=2026-12-20&to=2026-12-31')).closed as { date: string; reason: string }[];
    assert.deepEqual(
      international.map((day) => `${day.date} ${day.reason}`),
      ['2026-12-20 Weekend', '2026-12-25 Christmas Day', '2026-12-26 Weekend', '2026-12-27 Weekend'],
    );
    assert.deepEqual(json(await get('/v1/calendar?market=crypto&from=2027-03-01&to=2027-03-31')).closed, []);
    const plain = json(await get('/v1/calendar'));
    assert.equal(plain.market, 'tehran');
    assert.equal(plain.from, '2026-11-19');
    assert.equal(plain.to, '2026-12-19');
  });

  it('refuses bad input in the error envelope, never a 500', async () => {
    for (const [url, needle] of [
      ['/v1/calendar?from=2026-02-30', 'not a calendar date'],
      ['/v1/calendar?from=1406/13/01', 'Jalali'],
      ['/v1/calendar?from=yesterday', 'is not'],
      ['/v1/calendar?from=2026-11-20T10:00:00Z', 'date-time'],
      ['/v1/calendar?from=2026-01-01&to=2027-01-02', '366'],
      ['/v1/calendar?from=2026-02-01&to=2026-01-01', 'before'],
      ['/v1/calendar?market=nasdaq', 'market'],
      ['/v1/calendar?markets=tehran', 'markets'],
    ] as const) {
      const response = await get(url);
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      const body = json(response);
      assert.equal(body.error, 'INVALID_PARAMETER', url);
      assert.ok(JSON.stringify(body).includes(needle), `${url}: ${response.body}`);
    }
    // 366 days is allowed.
    assert.equal((await get('/v1/calendar?from=2026-01-01&to=2027-01-01')).statusCode, 200);
  });

  it('keeps an old price ok while tehran is closed on Friday, with the market in detail, the feed and the stream; crypto never closes', async () => {
    clock.set(Date.parse('2026-11-20T15:00:00+03:30'));
    await eventually(async () => (await rate('usd_free')).market?.state === 'closed', 5000);
    const usd = await rate('usd_free');
    assert.equal(usd.status, 'ok');
    assert.deepEqual(usd.market, { name: 'tehran', state: 'closed', reason: 'Friday', reason_fa: 'جمعه', opens_at: '2026-11-21T00:00:00+03:30' });
    // ?expand=sources judges each source's value by the same open-time age: none is rejected as stale.
    // The serving side ages its snapshot first (the clock jumped hours): that one has no sources. The leader's
    // own build, with each source's view, follows on its tick and must replace it although its rates are the same.
    const expanded = await eventually(async () => {
      const rates = json(await get('/v1/rates/usd_free?expand=sources')).rates as { sources: { rejected: string | null }[] }[];
      return rates[0]!.sources.length > 0 ? rates : null;
    }, 5000);
    for (const source of expanded![0]!.sources) assert.notEqual(source.rejected, 'stale');
    const btc = await rate('btc_usd');
    assert.equal(btc.status, 'stale', 'crypto never closes: 15 h 10 min is stale');
    assert.deepEqual(btc.market, { name: 'crypto', state: 'open', reason: null, reason_fa: null, opens_at: null });
    const gold = await rate('gold_ounce');
    assert.equal(gold.market?.name, 'international');
    assert.equal(gold.market?.state, 'open');
    // The webservice feed's items keep their fields and carry the market.
    const feed = json(await harness.app.inject({ url: '/webservice/calendar-reader', headers: { 'x-api-key': key } }));
    assert.deepEqual((feed.usd_free as { market: MarketJson }).market, usd.market);
    assert.equal((feed.usd_free as { status: string }).status, 'ok');
    // The stream's first snapshot carries it too.
    const stream = await openStream(base, '/v1/stream?keys=usd_free,btc_usd', { 'x-api-key': key });
    streams.push(stream);
    const first = await stream.event(0);
    assert.equal(first.event, 'snapshot');
    const streamed = ratesOf(first).rates as unknown as RateJson[];
    assert.deepEqual(streamed.find((r) => r.key === 'usd_free')?.market, usd.market);
    assert.equal(streamed.find((r) => r.key === 'btc_usd')?.market?.name, 'crypto');
    stream.close();
  });

  it('turns the price stale once the market has been open for its max age, counting open time only', async () => {
    // Saturday 00:15: 25 minutes open (10 on Thursday, 15 now): still ok.
    clock.set(Date.parse('2026-11-21T00:15:00+03:30'));
    await eventually(async () => (await rate('usd_free')).market?.state === 'open', 5000);
    assert.equal((await rate('usd_free')).status, 'ok');
    // Saturday 00:25: 35 minutes of open time, past 30.
    clock.set(Date.parse('2026-11-21T00:25:00+03:30'));
    const stale = await eventuallyFound(async () => {
      const usd = await rate('usd_free');
      return usd.status === 'stale' ? usd : null;
    }, 5000);
    assert.equal(stale.stale_seconds, 35 * 60);
  });

  it('applies a closure an operator declares (in the store; every node rereads it within a second, or at once on a notice) to every rate of the market, and an opening', async () => {
    clock.set(Date.parse('2026-11-21T00:26:00+03:30'));
    await harness.store.calendar.declare('tehran', ['2026-11-21'], 'close', 'Bazaar closed: mourning');
    const closed = await eventuallyFound(async () => {
      const usd = await rate('usd_free');
      return usd.market?.state === 'closed' ? usd : null;
    }, 2000);
    assert.equal(closed.market?.reason, 'Bazaar closed: mourning');
    // The whole of Saturday is closed: the value's open time is back to 10 minutes, ok again.
    assert.equal(closed.status, 'ok');
    const listed = json(await get('/v1/calendar?from=2026-11-21&to=2026-11-21')).closed as { reason: string }[];
    assert.deepEqual(listed.map((day) => day.reason), ['Bazaar closed: mourning']);
    await harness.store.calendar.declare('tehran', ['2026-11-21'], 'open', null);
    await eventually(async () => (await rate('usd_free')).market?.state === 'open', 2000);
  });

  it('answers ?at= on a closed day with the last close before it and that day’s market state', async () => {
    clock.set(Date.parse('2026-11-21T00:30:00+03:30'));
    // History records what was served; Friday noon lies after the value was recorded.
    const response = await eventuallyFound(async () => {
      const answer = await get('/v1/rates/usd_free?at=2026-11-20T12:00:00%2B03:30');
      const body = json(answer);
      return answer.statusCode === 200 && (body.rates as RateJson[])[0]?.status === 'historical' ? body : null;
    }, 5000);
    const usd = (response.rates as (RateJson & { value: number | null })[])[0]!;
    assert.equal(usd.value, 1_000_000);
    assert.deepEqual(usd.market, { name: 'tehran', state: 'closed', reason: 'Friday', reason_fa: 'جمعه', opens_at: '2026-11-21T00:00:00+03:30' });
  });

  it('answers ?at=<now> with the value served now, from the candle still open (its close recorded by then)', async () => {
    clock.set(Date.parse('2026-11-21T10:00:20+03:30'));
    const now = new Date(clock.now()).toISOString();
    for (const source of harness.config.sources) writeSource(source.path!, { [SAMPLE.usd_free]: { value: 1_000_777, updated_at: now } }, now);
    await eventually(async () => (await get('/v1/rates/usd_free')).body.includes('"value":1000777,'), 5000);
    clock.set(Date.parse('2026-11-21T10:00:30+03:30'));
    const at = encodeURIComponent(new Date(clock.now()).toISOString());
    const usd = await eventuallyFound(async () => {
      const answer = await get(`/v1/rates/usd_free?at=${at}`);
      const first = (json(answer).rates as (RateJson & { value: number | null; grain: string | null })[] | undefined)?.[0];
      return first?.value === 1_000_777 ? first : null;
    }, 5000);
    assert.equal(usd.status, 'historical');
    assert.equal(usd.grain, '1m', 'the minute still open at `at`');
    assert.equal(usd.market?.state, 'open');
  });
});
