import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { rollUp, type Candle, type StoredCandle } from '../../../domain/candle.js';
import { ZoneTime } from '../../../domain/time.js';
import { Buckets } from '../../../history/ranges/buckets.js';
import { ErrorSchema } from '../../schemas.js';
import { HistoryResponse } from './schema.js';
import { DetailResponse } from '../detail/schema.js';
import { API_SCHEMAS } from '../registry.js';
import { eventually, writeRaw } from '../../../../test/support/env.js';
import { dialects, json, startHarness, type Harness } from '../../../../test/support/harness.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
/** A reference no test source feeds, so only the seeded history speaks for it. */
const SEEDED = 'gbp_free';

function assertMatches(schema: TSchema, body: unknown) {
  assert.ok(Value.Check(schema, API_SCHEMAS, body), `does not match ${schema.$id}: ${JSON.stringify([...Value.Errors(schema, API_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
}

/** Candle values as they appear in a body, for comparison with stored ones. */
const asBody = (time: ZoneTime) => (c: Candle) => ({ t: time.format(c.start), open: Number(c.open), high: Number(c.high), low: Number(c.low), close: Number(c.close), points: c.points });

for (const dialect of dialects()) {
  describe(`GET /v1/rates/{key}/history (${dialect.name})`, dialect.options, () => {
    let harness: Harness;
    let key: string;
    const time = new ZoneTime('Asia/Tehran');
    const buckets = new Buckets(time);
    const today = buckets.start(Date.now(), '1d');
    const days: Candle[] = [];
    const hours: Candle[] = [];
    const minutes: Candle[] = [];
    /** Three hours of minute candles, three days ago from 10:00 local. */
    const minuteFrom = buckets.startOfDate(...buckets.localDate(today - 3 * DAY)) + 10 * HOUR;

    const get = (url: string, apiKey = key, headers: Record<string, string> = {}) => harness.app.inject({ url, headers: { 'x-api-key': apiKey, ...headers } });
    const error = (response: { statusCode: number; body: string }, status: number, code: string, mentions?: RegExp) => {
      assert.equal(response.statusCode, status, response.body);
      const body = json(response);
      assertMatches(ErrorSchema, body);
      assert.equal(body.error, code);
      if (mentions) assert.match(String(body.message), mentions);
    };

    before(async () => {
      harness = await startHarness({ databaseUrl: dialect.databaseUrl, withoutBands: true });
      ({ key } = await harness.keyFor('charts', 'enterprise'));
      // 400 days of daily candles up to yesterday, 40 days of hours, three hours of minutes; values with
      // decimals and digits no float keeps (the last day's high is above 2^53).
      const rows: StoredCandle[] = [];
      let start = buckets.back(today, '1d', 400);
      for (let i = 0; start < today; i++, start = buckets.next(start, '1d')) {
        const base = 1_400_000 + i * 10;
        const high = start === buckets.back(today, '1d', 1) ? '123456789012345678' : `${base + 9}.75`;
        days.push({ start, open: `${base}.5`, high, low: `${base - 3}`, close: `${base + 1}.25`, points: 100 + i, source: 'alpha', closeAt: start + DAY - 5000 });
      }
      for (let at = today - 40 * DAY, i = 0; at < today; at += HOUR, i++) {
        hours.push({ start: at, open: `${2000 + (i % 7)}`, high: `${2010 + (i % 5)}.5`, low: `${1990 - (i % 3)}`, close: `${2001 + (i % 7)}.125`, points: 60, source: i % 2 ? 'alpha' : 'beta', closeAt: at + HOUR - 1000 });
      }
      for (let at = minuteFrom, i = 0; at < minuteFrom + 3 * HOUR; at += MINUTE, i++) {
        minutes.push({ start: at, open: `0.${100 + i}`, high: `0.${300 + i}`, low: `0.0${10 + (i % 80)}`, close: `0.${200 + i}`, points: 1 + (i % 4), source: 'alpha', closeAt: at + 30_000 });
      }
      for (const candle of days) rows.push({ grain: 'day', reference: SEEDED, candle });
      for (const candle of hours) rows.push({ grain: 'hour', reference: SEEDED, candle });
      for (const candle of minutes) rows.push({ grain: 'minute', reference: SEEDED, candle });
      await harness.store.history.write(rows);
    });
    after(() => harness.close());

    it('defaults to the last 30 daily candles, each starting at local midnight, values exact', async () => {
      const response = await get(`/v1/rates/${SEEDED}/history`);
      assert.equal(response.statusCode, 200, response.body);
      const body = json(response);
      assertMatches(HistoryResponse, body);
      assert.equal(body.key, SEEDED);
      assert.equal(body.interval, '1d');
      assert.equal(body.from, time.format(buckets.back(today, '1d', 29)));
      assert.equal(body.to, time.format(buckets.next(today, '1d')));
      const candles = body.candles as Record<string, unknown>[];
      // Today has no candle yet: empty intervals are left out.
      assert.equal(body.count, 29);
      assert.equal(candles.length, 29);
      assert.deepEqual(candles.map((c) => ({ t: c.t, open: c.open, high: c.high, low: c.low, close: c.close, points: c.points })), days.slice(-29).map(asBody(time)));
      assert.ok(candles.every((c) => /T00:00:00\+03:30$/.test(String(c.t))), 'candles.every((c) => /T00:00:00\\+03:30$/.test(String(c.t)))');
      assert.match(String(candles[0]!.t_jalali), /^14\d\d\/\d\d\/\d\d 00:00:00$/);
      assert.equal(candles[28]!.t_jalali, `${time.jalaliDate(days.at(-1)!.start)} 00:00:00`);
      // The exact text of each number, also where a float would not hold it.
      assert.ok(response.body.includes(`"high":123456789012345678,`), 'response.body.includes(`"high":123456789012345678,`)');
      assert.ok(response.body.includes(`"open":${days.at(-1)!.open},`), 'response.body.includes(`"open":${days.at(-1)!.open},`)');
    });

    it('answers an alias under its key, routed to history (not to the detail endpoint)', async () => {
      const body = json(await get('/v1/rates/gbp/history?interval=1d'));
      assert.equal(body.key, SEEDED);
      assert.ok(Array.isArray(body.candles), 'Array.isArray(body.candles)');
    });

    it('builds 4h candles from the hours and weeks (from Saturday) from the days', async () => {
      const from = today - 10 * DAY;
      const to = today - 5 * DAY;
      const fourHours = json(await get(`/v1/rates/${SEEDED}/history?interval=4h&from=${encodeURIComponent(time.format(from))}&to=${encodeURIComponent(time.format(to - 1))}`));
      const expected = rollUp(hours.filter((h) => h.start >= from && h.start < to), buckets.bucketer('4h')).map(asBody(time));
      assert.equal(expected.length, 30);
      assert.deepEqual((fourHours.candles as Record<string, unknown>[]).map(({ t, open, high, low, close, points }) => ({ t, open, high, low, close, points })), expected);

      const weeks = json(await get(`/v1/rates/${SEEDED}/history?interval=1w&from=${time.day(today - 100 * DAY)}`));
      const weekly = weeks.candles as { t: string; points: number }[];
      assert.ok(weekly.length >= 14, 'weekly.length >= 14');
      for (const week of weekly) assert.equal(new Date(Date.parse(week.t) + 3.5 * HOUR).getUTCDay(), 6, `${week.t} is a Saturday`);
      const sumOfDays = days.filter((d) => d.start >= Date.parse(weekly[1]!.t) && d.start < Date.parse(weekly[2]!.t)).reduce((sum, d) => sum + d.points, 0);
      assert.equal(weekly[1]!.points, sumOfDays);
    });

    it('builds 1m, 5m and 15m candles from the minutes', async () => {
      const from = encodeURIComponent(time.format(minuteFrom));
      const to = encodeURIComponent(time.format(minuteFrom + 3 * HOUR - 1));
      const one = json(await get(`/v1/rates/${SEEDED}/history?interval=1m&from=${from}&to=${to}`));
      assert.equal(one.count, 180);
      const five = json(await get(`/v1/rates/${SEEDED}/history?interval=5m&from=${from}&to=${to}`));
      assert.deepEqual((five.candles as Record<string, unknown>[]).map(({ t, open, high, low, close, points }) => ({ t, open, high, low, close, points })), rollUp(minutes, buckets.bucketer('5m')).map(asBody(time)));
      const fifteen = json(await get(`/v1/rates/${SEEDED}/history?interval=15m&from=${from}&to=${to}`));
      assert.equal(fifteen.count, 12);
    });

    it('reads Jalali dates, and a date for `to` takes in the whole day', async () => {
      const first = today - 12 * DAY;
      const last = today - 10 * DAY;
      const jalali = (ms: number) => time.jalaliDate(ms).replaceAll('/', '-');
      const body = json(await get(`/v1/rates/${SEEDED}/history?interval=1h&from=${jalali(first)}&to=${jalali(last)}`));
      assert.equal(body.count, 72);
      assert.equal(body.from, time.format(first));
      assert.equal(body.to, time.format(buckets.next(last, '1d')));
      const gregorian = json(await get(`/v1/rates/${SEEDED}/history?interval=1h&from=${time.day(first)}&to=${time.day(last)}`));
      assert.deepEqual(gregorian.candles, body.candles);
    });

    it('refuses bad parameters with 400 INVALID_PARAMETER naming them', async () => {
      error(await get(`/v1/rates/${SEEDED}/history?interval=2m`), 400, 'INVALID_PARAMETER', /interval/);
      error(await get(`/v1/rates/${SEEDED}/history?from=yesterday`), 400, 'INVALID_PARAMETER', /"from"/);
      error(await get(`/v1/rates/${SEEDED}/history?to=2026-02-30`), 400, 'INVALID_PARAMETER', /"to".*calendar date/);
      error(await get(`/v1/rates/${SEEDED}/history?from=1404-12-30`), 400, 'INVALID_PARAMETER', /Jalali/);
      error(await get(`/v1/rates/${SEEDED}/history?from=2026-11-01T10:00:00`), 400, 'INVALID_PARAMETER', /offset/);
      error(await get(`/v1/rates/${SEEDED}/history?from=${time.day(today - DAY)}&to=${time.day(today - 5 * DAY)}`), 400, 'INVALID_PARAMETER', /"from".*before "to"/);
      error(await get(`/v1/rates/${SEEDED}/history?unit=rial&x=1`), 400, 'INVALID_PARAMETER');
      error(await get(`/v1/rates/usd,eur/history`), 400, 'INVALID_KEYS');
    });

    it('reads a `to` later than now as now, and refuses a `from` later than now', async () => {
      const now = Date.now();
      /** The end of the hour holding the moment the server answered. */
      const endOfServedHour = (body: Record<string, unknown>) => time.format(buckets.next(buckets.start(Date.parse(String(body.generated_at)), '1h'), '1h'));
      for (const to of [time.format(now + 10 * DAY), time.day(now + 400 * DAY), '2999-01-01']) {
        const response = await get(`/v1/rates/${SEEDED}/history?interval=1h&from=${encodeURIComponent(time.format(now - 5 * HOUR))}&to=${encodeURIComponent(to)}`);
        assert.equal(response.statusCode, 200, response.body);
        const body = json(response);
        assert.equal(body.to, endOfServedHour(body), `to=${to} ends with the candle holding now`);
      }
      const defaulted = json(await get(`/v1/rates/${SEEDED}/history?interval=1h&to=${encodeURIComponent(time.format(now + 10 * DAY))}`));
      assert.equal(defaulted.to, endOfServedHour(defaulted));
      const servedHour = buckets.start(Date.parse(String(defaulted.generated_at)), '1h');
      assert.equal(defaulted.from, time.format(buckets.back(servedHour, '1h', 29)), 'the default 30 candles back from now, not from the future `to`');
      error(await get(`/v1/rates/${SEEDED}/history?interval=1m&from=${encodeURIComponent(time.format(now + 10 * DAY))}&to=${encodeURIComponent(time.format(now + 10 * DAY + 999 * MINUTE))}`), 400, 'INVALID_PARAMETER', /"from".*future/);
      error(await get(`/v1/rates/${SEEDED}/history?from=${time.day(now + 2 * DAY)}`), 400, 'INVALID_PARAMETER', /"from".*future/);
    });

    it('refuses more than 1,000 candles, and sub-hour candles older than the minute retention', async () => {
      error(await get(`/v1/rates/${SEEDED}/history?interval=1m&from=${time.day(today - 2 * DAY)}`), 400, 'INVALID_PARAMETER', /1,000/);
      error(await get(`/v1/rates/${SEEDED}/history?interval=1h&from=${time.day(today - 42 * DAY)}`), 400, 'INVALID_PARAMETER', /1,000/);
      assert.equal((await get(`/v1/rates/${SEEDED}/history?interval=1h&from=${time.day(today - 41 * DAY)}&to=${time.day(today - 1)}`)).statusCode, 200, '984 hours');
      const old = today - 100 * DAY;
      error(await get(`/v1/rates/${SEEDED}/history?interval=5m&from=${time.day(old)}&to=${time.day(old)}`), 400, 'INVALID_PARAMETER', /"interval".*kept only/);
      assert.equal((await get(`/v1/rates/${SEEDED}/history?interval=1h&from=${time.day(old)}&to=${time.day(old)}`)).statusCode, 200);
    });

    it('404s an unknown key and 403s a reference outside the allowance', async () => {
      error(await get('/v1/rates/no_such_thing/history'), 404, 'RATE_NOT_FOUND');
      const { key: narrow } = await harness.keyFor('narrow-history', 'enterprise', { references: ['usd_free'] });
      error(await get(`/v1/rates/${SEEDED}/history`, narrow), 403, 'REFERENCE_NOT_IN_PLAN');
      assert.equal((await get('/v1/rates/usd_free/history', narrow)).statusCode, 200);
    });

    it('keeps to the plan’s history window: an older `from` is 403, a default one is cut to the window', async () => {
      const { key: pro } = await harness.keyFor('pro-history', 'pro');
      assert.equal((await get(`/v1/rates/${SEEDED}/history?from=${time.day(today - 300 * DAY)}&to=${time.day(today - 290 * DAY)}`, pro)).statusCode, 200);
      error(await get(`/v1/rates/${SEEDED}/history?from=${time.day(today - 380 * DAY)}&to=${time.day(today - 370 * DAY)}`, pro), 403, 'HISTORY_WINDOW_EXCEEDED', /365 days/);
      const { key: week } = await harness.keyFor('week-history', 'pro', { overrides: { history_days: 7 } });
      error(await get(`/v1/rates/${SEEDED}/history?from=${time.day(today - 8 * DAY)}`, week), 403, 'HISTORY_WINDOW_EXCEEDED', /7 days/);
      const cut = json(await get(`/v1/rates/${SEEDED}/history`, week));
      assert.equal(cut.from, time.format(buckets.back(today, '1d', 7)));
      assert.equal(cut.count, 7);
      const { key: enterprise } = await harness.keyFor('forever-history', 'enterprise');
      assert.equal((await get(`/v1/rates/${SEEDED}/history?from=${time.day(today - 399 * DAY)}&to=${time.day(today - 380 * DAY)}`, enterprise)).statusCode, 200);
    });

    it('caches a range wholly in the past for a day (privately), with an ETag and 304', async () => {
      const url = `/v1/rates/${SEEDED}/history?from=${time.day(today - 20 * DAY)}&to=${time.day(today - 10 * DAY)}`;
      const first = await get(url);
      assert.equal(first.headers['cache-control'], 'private, max-age=86400');
      const etag = String(first.headers.etag);
      assert.match(etag, /^"h[0-9a-z]+"$/);
      const again = await get(url, key, { 'if-none-match': etag });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      const other = await get(`/v1/rates/${SEEDED}/history?from=${time.day(today - 21 * DAY)}&to=${time.day(today - 10 * DAY)}`);
      assert.notEqual(other.headers.etag, etag);
      const live = await get(`/v1/rates/${SEEDED}/history`);
      assert.match(String(live.headers['cache-control']), /^private, max-age=[0-9]$/);
    });

    it('compresses a range over 1 KB when asked (gzip and br), once per ETag, with a weak ETag and the same content', async () => {
      const url = `/v1/rates/${SEEDED}/history?from=${time.day(today - 30 * DAY)}&to=${time.day(today - 1 * DAY)}`;
      const plain = await get(url);
      assert.equal(plain.statusCode, 200);
      assert.ok(plain.rawPayload.length > 1024, `a body of ${plain.rawPayload.length} bytes`);
      assert.equal(plain.headers['content-encoding'], undefined);
      const etag = String(plain.headers.etag);
      for (const [encoding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
        const packed = await get(url, key, { 'accept-encoding': encoding });
        assert.equal(packed.headers['content-encoding'], encoding);
        assert.match(String(packed.headers.vary), /Accept-Encoding/);
        assert.equal(packed.headers.etag, `W/${etag}`);
        assert.ok(packed.rawPayload.length < plain.rawPayload.length / 3, `${encoding}: ${packed.rawPayload.length} of ${plain.rawPayload.length} bytes`);
        // The same content; generated_at says when each answer was made.
        const unstamped = (body: string) => body.replace(/"generated_at":"[^"]+"/, '');
        assert.equal(unstamped(decode(packed.rawPayload).toString()), unstamped(plain.body));
        assert.match(decode(packed.rawPayload).toString(), /"generated_at":"[^"]+\+03:30"/);
        assert.equal((await get(url, key, { 'accept-encoding': encoding, 'if-none-match': `W/${etag}` })).statusCode, 304);
      }
      const small = await get(`/v1/rates/${SEEDED}/history?interval=1d&from=${time.day(today - 2 * DAY)}&to=${time.day(today - 1 * DAY)}`, key, { 'accept-encoding': 'gzip' });
      assert.equal(small.statusCode, 200);
      assert.ok(small.rawPayload.length <= 1024, `${small.rawPayload.length} bytes`);
      assert.equal(small.headers['content-encoding'], undefined, 'a body of 1 KB or less is sent as it is');
    });

    it('records what is served: the current minute’s candle closes at the value the detail endpoint serves', async () => {
      const alpha = harness.config.sources[0]!.path!;
      const beta = harness.config.sources[1]!.path!;
      const doc = (value: string) => `{"updated_at":"${new Date().toISOString()}","items":{"ir_fx_free_usd":${value}}}`;
      writeRaw(beta, doc('1'));
      for (const value of ['0.1', '123456789012345678', '0.3']) {
        writeRaw(alpha, doc(value));
        await eventually(async () => (await get('/v1/rates/usd_free')).body.includes(`"value":${value},`), 5000);
      }
      const now = Date.now();
      const history = await get(`/v1/rates/usd_free/history?interval=1m&from=${encodeURIComponent(time.format(now - 2 * MINUTE))}`);
      const body = json(history);
      const last = (body.candles as Record<string, unknown>[]).at(-1)!;
      assert.ok(history.body.endsWith(`"close":0.3,"points":${last.points}}]}`), history.body.slice(-200));
      assert.ok(history.body.includes('"high":123456789012345678,') || (body.candles as unknown[]).length > 1, 'the big value is in the minute or the one before');
      const detail = json(await get('/v1/rates/usd_free'));
      const rate = (detail.rates as Record<string, unknown>[])[0]!;
      assert.equal(rate.value, 0.3);
      assert.equal(rate.day_low, 0.1);
      assert.ok((await get('/v1/rates/usd_free')).body.includes('"day_high":123456789012345678,'), '(await get(\'/v1/rates/usd_free\')).body.includes(\'"day_high":123456789012345678,\')');
    });

    it('the status page draws each source’s last six hours from what was recorded', async () => {
      const page = await harness.app.inject('/status');
      assert.equal(page.statusCode, 200);
      const charts = [...page.body.matchAll(/<svg class="spark"[^>]*aria-label="(\d+) values served in the last 6 hours">.*?<polyline points="([^"]+)"/g)];
      assert.equal(charts.length, harness.config.sources.length);
      const [alpha] = charts;
      assert.ok(Number(alpha![1]) > 0, 'alpha served values in this run');
      assert.equal(alpha![2]!.split(' ').length, 36, 'ten-minute buckets over six hours');
    });

    describe('GET /v1/rates/{keys}?at=', () => {
      it('answers the values served at that moment, status historical, in the detail envelope', async () => {
        const at = minuteFrom + 90 * MINUTE + 20_000;
        const response = await get(`/v1/rates/${SEEDED},usd_free,nope?at=${encodeURIComponent(time.format(at))}`);
        assert.equal(response.statusCode, 200, response.body);
        const body = json(response);
        assertMatches(DetailResponse, body);
        const [gbp, usd] = body.rates as Record<string, unknown>[];
        assert.equal(gbp!.status, 'historical');
        // 20 s into minute 90, which is still open: the close of minute 89, the last to end by then.
        assert.equal(gbp!.value, Number(minutes[89]!.close));
        assert.equal(gbp!.source, 'alpha');
        assert.equal(gbp!.updated_at, time.format(minutes[89]!.closeAt));
        assert.equal(gbp!.change, null);
        assert.equal(usd!.status, 'unavailable', 'nothing was served for it then');
        assert.equal(usd!.value, null);
        assert.deepEqual((body.meta as { unknown_keys: string[] }).unknown_keys, ['nope']);
      });

      it('takes a date as that day’s close, and reads hours or days where minutes are not kept', async () => {
        const yesterday = days.at(-1)!;
        const day = json(await get(`/v1/rates/${SEEDED}?at=${time.day(yesterday.start)}`));
        const value = (day.rates as Record<string, unknown>[])[0]!;
        // Yesterday's minutes are not there; the last candle that ended by the end of the day is its hour.
        assert.equal(value.value, Number(hours.at(-1)!.close));
        const old = json(await get(`/v1/rates/${SEEDED}?at=${encodeURIComponent(time.format(today - 200 * DAY + 5 * HOUR))}`));
        assert.equal((old.rates as Record<string, unknown>[])[0]!.value, Number(days.find((d) => d.start === buckets.start(today - 201 * DAY, '1d'))!.close));
      });

      it('refuses a bad or future `at`, and one outside the plan’s window', async () => {
        error(await get(`/v1/rates/${SEEDED}?at=soon`), 400, 'INVALID_PARAMETER', /"at"/);
        error(await get(`/v1/rates/${SEEDED}?at=${encodeURIComponent(time.format(Date.now() + HOUR))}`), 400, 'INVALID_PARAMETER', /future/);
        const { key: pro } = await harness.keyFor('pro-at', 'pro');
        error(await get(`/v1/rates/${SEEDED}?at=${time.day(today - 366 * DAY)}`, pro), 403, 'HISTORY_WINDOW_EXCEEDED');
        assert.equal((await get(`/v1/rates/${SEEDED}?at=${time.day(today - 364 * DAY)}`, pro)).statusCode, 200);
      });

      it('is the history service: a plan without it gets 403, and usage counts it as history', async () => {
        const { key: basic } = await harness.keyFor('basic-at', 'basic');
        assert.equal((await get('/v1/rates/usd_free', basic)).statusCode, 200);
        error(await get(`/v1/rates/usd_free?at=${time.day(today - DAY)}`, basic), 403, 'SERVICE_NOT_ACTIVE');
        const { key: counted } = await harness.keyFor('counted-at', 'enterprise');
        await get(`/v1/rates/usd_free?at=${time.day(today - DAY)}`, counted);
        await get(`/v1/rates/usd_free/history`, counted);
        await get('/v1/rates/usd_free', counted);
        const usage = json(await get('/v1/usage', counted));
        const services = Object.fromEntries((usage.services as { service: string; requests: number }[]).map((s) => [s.service, s.requests]));
        assert.equal(services.history, 2);
        assert.equal(services.detail, 1);
      });
    });
  });
}
