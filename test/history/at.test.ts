/**
 * `?at=` against a real server: history imported with the real CLI at all
 * three grains (minutes inside the minute retention, hours beyond it, days
 * imported as days), then asked over HTTP. The value at `at` is the close of
 * the last candle that ended by `at`, at the finest grain kept for that time,
 * stamped with its own time: never a value recorded after `at`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { assertBuilt, cleanEnv, cliOk, get, startServer, type Response, type ServerProcess } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { dialects } from '../support/harness.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const time = new ZoneTime('Asia/Tehran');
const buckets = new Buckets(time);
/** No source feeds it: only the imported history speaks for it. */
const KEY = 'gbp_free';

assertBuilt();

/** The same text in Persian digits (۰-۹), and in Arabic-Indic ones (٠-٩). */
const persianDigits = (text: string) => text.replace(/[0-9]/g, (d) => '۰۱۲۳۴۵۶۷۸۹'[Number(d)]!);
const arabicDigits = (text: string) => text.replace(/[0-9]/g, (d) => '٠١٢٣٤٥٦٧٨٩'[Number(d)]!);

/** Local midnight `days` days before today. */
const daysAgo = (days: number) => buckets.startOfDate(...buckets.localDate(Date.now() - days * DAY));
/** `day` at a local clock time `hh:mm:ss`. */
const clock = (day: number, text: string) => {
  const [h, m, s] = text.split(':').map(Number) as [number, number, number];
  return day + h * HOUR + m * 60_000 + s * 1000;
};

for (const dialect of dialects()) {
  describe(`?at= on a real server, history imported at minute, hour and day grain (${dialect.name})`, dialect.options, () => {
    const dir = tempDir('nerkh-at-');
    const database = `nerkh_at_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const admin = dialect.databaseUrl ? new pg.Pool({ connectionString: dialect.databaseUrl, max: 1 }) : null;
    let env: NodeJS.ProcessEnv;
    let server: ServerProcess;
    let key: string;

    // Yesterday: minute candles kept (the retention is two days). Three days ago: hours only. Ten to twelve days ago: imported days.
    const d1 = daysAgo(1);
    const d3 = daysAgo(3);
    const d10 = daysAgo(10);
    const d11 = daysAgo(11);
    const d12 = daysAgo(12);
    const points: [number, string][] = [
      [clock(d1, '10:00:05'), '100'],
      [clock(d1, '10:00:40'), '101'],
      [clock(d1, '10:01:10'), '102'],
      [clock(d1, '10:05:30'), '105'],
      [clock(d3, '13:10:00'), '200'],
      [clock(d3, '13:50:00'), '201'],
      [clock(d3, '14:20:00'), '202'],
      [clock(d3, '14:40:00'), '203'],
    ];
    const jalaliSlash = (day: number) => time.jalaliDate(day);
    const jalaliDash = (day: number) => time.jalaliDate(day).replaceAll('/', '-');

    const ask = (at: string, raw = false) => get(server.base, `/v1/rates/${KEY}?at=${raw ? at : encodeURIComponent(at)}`, key);

    /** A 200 whose one rate is `value`, the close of a `grain` candle, updated at `updatedAt`, and never later than `at`. */
    function answers(response: Response, at: number, value: number, updatedAt: number, grain: '1m' | '1h' | '1d', label: string): void {
      assert.equal(response.status, 200, `${label}: ${response.text}`);
      const rate = (response.json as { rates: Record<string, unknown>[] }).rates[0]!;
      assert.equal(rate.status, 'historical', label);
      assert.equal(rate.value, value, `${label}: value`);
      assert.equal(rate.grain, grain, `${label}: the grain the answer names`);
      assert.equal(rate.updated_at, time.format(updatedAt), `${label}: updated_at`);
      assert.ok(Date.parse(String(rate.updated_at)) <= at, `${label}: ${String(rate.updated_at)} is after the moment asked, ${time.format(at)}`);
    }

    function refused(response: Response, mentions: RegExp, label: string): void {
      assert.equal(response.status, 400, `${label}: ${response.text}`);
      const body = response.json as { error: string; message: string };
      assert.equal(body.error, 'INVALID_PARAMETER', label);
      assert.match(body.message, mentions, label);
    }

    before(async () => {
      let databaseUrl: string | null = null;
      if (admin) {
        await admin.query(`create database ${database}`);
        const url = new URL(dialect.databaseUrl!);
        url.pathname = `/${database}`;
        databaseUrl = url.toString();
      }
      writeFileSync(join(dir.path, 'alpha.json'), JSON.stringify({ items: {}, updated_at: new Date().toISOString() }));
      writeFileSync(join(dir.path, 'nerkh.config.json'), JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: 'alpha.json' }], history: { minute_days: 2 } }));
      env = cleanEnv({ NERKH_CONFIG: join(dir.path, 'nerkh.config.json'), NERKH_DATA_DIR: join(dir.path, 'var'), NERKH_LOG_LEVEL: 'warn', ...(databaseUrl ? { NERKH_DATABASE_URL: databaseUrl } : {}) });
      server = await startServer(env as Record<string, string>);
      await cliOk(env, ['accounts', 'add', 'accountant', '--plan', 'enterprise']);
      key = (JSON.parse((await cliOk(env, ['keys', 'issue', 'accountant', '--json'])).stdout) as { key: string }).key;

      const pointsCsv = join(dir.path, 'points.csv');
      writeFileSync(pointsCsv, ['key,time,value', ...points.map(([at, value]) => `${KEY},${time.format(at)},${value}`)].join('\n'));
      assert.match((await cliOk(env, ['history', 'import', pointsCsv])).stdout, /3 minute, 3 hourly and 2 daily candles written/);
      // Daily candles dated the Jalali way, with slashes (as Nerkh writes them) and with dashes.
      const dailyCsv = join(dir.path, 'daily.csv');
      writeFileSync(dailyCsv, ['key,date,open,high,low,close', `${KEY},${jalaliSlash(d12)},300,301,299,300.5`, `${KEY},${jalaliDash(d11)},300.5,302,300,301`, `${KEY},${jalaliSlash(d10)},301,303,300,302`].join('\n'));
      assert.match((await cliOk(env, ['history', 'import', dailyCsv])).stdout, /0 minute, 0 hourly and 3 daily candles written/);

      // The key reaches the server's directory within its poll.
      const deadline = Date.now() + 10_000;
      while ((await get(server.base, `/v1/rates/${KEY}`, key)).status === 401 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    });
    after(async () => {
      await server?.kill();
      if (admin) {
        await admin.query(`drop database if exists ${database} with (force)`);
        await admin.end();
      }
      dir.cleanup();
    });

    it('at minute grain: the close of the last minute that ended by `at`, with its own time, never one recorded after', async () => {
      // 10:01:05: the 10:01 minute is still open (its 102 came at 10:01:10); the 10:00 minute ended with 101 at 10:00:40.
      const at = clock(d1, '10:01:05');
      answers(await ask(time.format(at)), at, 101, clock(d1, '10:00:40'), '1m', '10:01:05');
      const later = clock(d1, '10:03:00');
      answers(await ask(time.format(later)), later, 102, clock(d1, '10:01:10'), '1m', '10:03:00');
      // On the boundary: the 10:01 minute ends at 10:02:00 exactly, so it has ended.
      const boundary = clock(d1, '10:02:00');
      answers(await ask(time.format(boundary)), boundary, 102, clock(d1, '10:01:10'), '1m', '10:02:00');
    });

    it('a candle still open at `at` is used when its close was recorded by `at`', async () => {
      // 10:00:50: 100 and 101 came in the open 10:00 minute, 101 at 10:00:40: the value served at 10:00:50.
      const at = clock(d1, '10:00:50');
      answers(await ask(time.format(at)), at, 101, clock(d1, '10:00:40'), '1m', '10:00:50');
      // 10:01:05: the open 10:01 minute's close (102) came at 10:01:10, after `at`: the minute that ended (101) answers.
      const before = clock(d1, '10:01:05');
      answers(await ask(time.format(before)), before, 101, clock(d1, '10:00:40'), '1m', '10:01:05');
    });

    it('beyond the minute retention: the close of the last hour that ended, at the hour grain', async () => {
      const at = clock(d3, '14:30:00');
      answers(await ask(time.format(at)), at, 201, clock(d3, '13:50:00'), '1h', '14:30 three days ago');
      const onTheHour = clock(d3, '14:00:00');
      answers(await ask(time.format(onTheHour)), onTheHour, 201, clock(d3, '13:50:00'), '1h', '14:00 three days ago');
      // Inside the first hour of that day, after its close (201 at 13:50) was recorded: the open hour answers.
      const early = clock(d3, '13:59:59');
      answers(await ask(time.format(early)), early, 201, clock(d3, '13:50:00'), '1h', '13:59:59 three days ago');
      // Before that close: the last imported day (ten days ago) closed it.
      const earlier = clock(d3, '13:49:59');
      answers(await ask(time.format(earlier)), earlier, 302, buckets.next(d10, '1d') - 1000, '1d', '13:49:59 three days ago');
    });

    it('at day grain: a date is that day’s close, Jalali with slashes or dashes; a time inside a day gets the day before', async () => {
      const endOfD10 = buckets.next(d10, '1d') - 1;
      answers(await ask(time.day(d10)), endOfD10, 302, endOfD10 + 1 - 1000, '1d', 'Gregorian date');
      answers(await ask(jalaliSlash(d10)), endOfD10, 302, endOfD10 + 1 - 1000, '1d', 'Jalali date with slashes');
      answers(await ask(jalaliDash(d10)), endOfD10, 302, endOfD10 + 1 - 1000, '1d', 'Jalali date with dashes');
      const noon = clock(d10, '12:00:00');
      answers(await ask(time.format(noon)), noon, 301, d10 - 1000, '1d', 'noon ten days ago');
    });

    it('reads a date-time whose `+` arrived as a space (sent unencoded) as +, and says so when the text is wrong anyway', async () => {
      const at = clock(d1, '10:03:00');
      const text = time.format(at);
      assert.match(text, /\+03:30$/);
      // A literal "+" in the query string: the server decodes it to a space.
      answers(await ask(text, true), at, 102, clock(d1, '10:01:10'), '1m', 'unencoded +');
      answers(await ask(text.replace('+', ' ')), at, 102, clock(d1, '10:01:10'), '1m', 'space for +');
      refused(await ask(`${time.day(at)} 10:03`), /%2B/, 'a space elsewhere');
    });

    it('refuses a future `at` (a date-time or a date, Jalali too) with 400 INVALID_PARAMETER', async () => {
      refused(await ask(time.format(Date.now() + HOUR)), /"at".*future/, 'an hour ahead');
      refused(await ask('2030-01-01'), /"at".*2030-01-01 lies in the future/, '2030-01-01');
      refused(await ask(time.day(Date.now() + DAY)), /future/, 'tomorrow');
      refused(await ask(jalaliSlash(Date.now() + 2 * DAY)), /future/, 'the day after tomorrow, Jalali');
      // Today is no future: the close so far.
      const today = await ask(time.day(Date.now()));
      assert.equal(today.status, 200, today.text);
      assert.equal((today.json as { rates: { value: number }[] }).rates[0]!.value, 105);
    });

    it('names the grain on every rate, null for a reference with nothing served by then', async () => {
      const at = clock(d1, '10:03:00');
      const response = await get(server.base, `/v1/rates/${KEY},usd_free?at=${encodeURIComponent(time.format(at))}`, key);
      assert.equal(response.status, 200, response.text);
      const rates = (response.json as { rates: { key: string; status: string; grain: unknown }[] }).rates;
      assert.deepEqual(
        rates.map((rate) => [rate.key, rate.status, rate.grain]),
        [
          [KEY, 'historical', '1m'],
          ['usd_free', 'unavailable', null],
        ],
      );
      // The live answer has no grain: it is not read from history.
      const live = await get(server.base, `/v1/rates/${KEY}`, key);
      assert.equal('grain' in (live.json as { rates: object[] }).rates[0]!, false, live.text);
    });

    it('reads Persian and Arabic-Indic digits in `at`, `from` and `to` as ASCII ones', async () => {
      const endOfD10 = buckets.next(d10, '1d') - 1;
      answers(await ask(persianDigits(jalaliSlash(d10))), endOfD10, 302, endOfD10 + 1 - 1000, '1d', 'a Jalali date in Persian digits');
      answers(await ask(arabicDigits(jalaliDash(d10))), endOfD10, 302, endOfD10 + 1 - 1000, '1d', 'a Jalali date in Arabic-Indic digits');
      answers(await ask(persianDigits(time.day(d10))), endOfD10, 302, endOfD10 + 1 - 1000, '1d', 'a Gregorian date in Persian digits');
      const at = clock(d1, '10:03:00');
      answers(await ask(persianDigits(time.format(at))), at, 102, clock(d1, '10:01:10'), '1m', 'a date-time in Persian digits');
      answers(await ask(arabicDigits(time.format(at))), at, 102, clock(d1, '10:01:10'), '1m', 'a date-time in Arabic-Indic digits');

      const from = encodeURIComponent(persianDigits(jalaliSlash(d12)));
      const to = encodeURIComponent(arabicDigits(jalaliDash(d10)));
      const daily = await get(server.base, `/v1/rates/${KEY}/history?interval=1d&from=${from}&to=${to}`, key);
      assert.equal(daily.status, 200, daily.text);
      assert.deepEqual((daily.json as { candles: { close: number }[] }).candles.map((c) => c.close), [300.5, 301, 302]);

      // A date that is not one is refused as written, whatever its digits.
      const wrong = persianDigits('1405/13/01');
      refused(await ask(wrong), new RegExp(`"${wrong}" is not a date of the Jalali calendar`), 'month 13 in Persian digits');
    });

    it('takes Jalali dates with slashes or dashes for `from` and `to`, and a space-for-plus date-time', async () => {
      const daily = await get(server.base, `/v1/rates/${KEY}/history?interval=1d&from=${jalaliSlash(d12)}&to=${jalaliDash(d10)}`, key);
      assert.equal(daily.status, 200, daily.text);
      assert.deepEqual((daily.json as { candles: { t: string; close: number }[] }).candles.map((c) => [c.t, c.close]), [
        [time.format(d12), 300.5],
        [time.format(d11), 301],
        [time.format(d10), 302],
      ]);
      const from = time.format(clock(d3, '13:00:00'));
      const to = time.format(clock(d3, '14:00:00'));
      const hourly = await get(server.base, `/v1/rates/${KEY}/history?interval=1h&from=${from}&to=${to}`, key);
      assert.equal(hourly.status, 200, hourly.text);
      assert.deepEqual((hourly.json as { candles: { close: number }[] }).candles.map((c) => c.close), [201, 203]);
    });
  });
}
