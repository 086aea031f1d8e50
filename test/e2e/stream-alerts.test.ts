/**
 * Stream alerts end to end: one real `nerkh serve` on SQLite, fed by a file
 * source this test rewrites, streams opened over real HTTP. A crossing sends
 * one `alert` within one refresh interval (plus the source's poll); staying
 * true sends none; false then true again sends a second; a change_percent
 * rule reads the change from yesterday's close (a daily candle imported
 * before the server starts); bad rules are 400 INVALID_PARAMETER naming the
 * rule; a plan without `alerts` is 403 SERVICE_NOT_ACTIVE.
 *
 * Needs `npm run build` first.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EventSourceMessage } from 'eventsource-parser';
import { Store } from '../../src/store/store.js';
import { eventually, tempDir, writeRaw } from '../support/env.js';
import { openStream, ratesOf, type SseStream } from '../stream/sse-client.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from './helpers.js';

assertBuilt();

const REFRESH_SECONDS = 1;
const POLL_SECONDS = 0.2;
/** One refresh interval, the source's poll, and generous room for a loaded machine. */
const WITHIN_MS = (REFRESH_SECONDS + POLL_SECONDS) * 1000 + 1500;
/** Yesterday's close of usd_free, from which change_percent is measured. */
const PREV_CLOSE = '1000000';

interface Alert {
  rule: string;
  key: string;
  value: number;
  change_percent: number | null;
  at: string;
}

const alertsIn = (stream: SseStream): Alert[] => stream.events.filter((event) => event.event === 'alert').map((event) => JSON.parse(event.data) as Alert);
const valueIn = (event: EventSourceMessage, key: string) => ratesOf(event).rates.find((rate) => rate.key === key)?.value;

describe('stream alerts with a real nerkh serve', () => {
  const dir = tempDir('nerkh-stream-alerts-');
  const sourcePath = join(dir.path, 'alpha.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = cleanEnv({ NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'var'), NERKH_LOG_LEVEL: 'warn' });
  const streams: SseStream[] = [];
  const keys: Record<string, string> = {};
  let server: ServerProcess;

  /** usd_free at `value` (number text, exactly), eur_free fixed. Returns when it was written. */
  const write = (value: string): number => {
    writeRaw(sourcePath, `{"updated_at":"${new Date().toISOString()}","items":{"ir_fx_free_usd":${value},"ir_fx_free_eur":1200000}}`);
    return Date.now();
  };
  /** A stream opened and admitted, past its snapshot. */
  const open = async (query: string, key = keys.watcher!): Promise<SseStream> => {
    const stream = await openStream(server.base, `/v1/stream?${query}`, { 'x-api-key': key });
    streams.push(stream);
    assert.equal(stream.status, 200, stream.body);
    await stream.event(0);
    return stream;
  };
  /** Waits for the `rates` event that shows usd_free at `value`; its index. */
  const ratesAt = async (stream: SseStream, value: number): Promise<number> =>
    eventually(
      () => {
        const index = stream.events.findIndex((event) => event.event === 'rates' && valueIn(event, 'usd_free') === value);
        return index === -1 ? undefined : index;
      },
      WITHIN_MS + 3000,
      10,
    ) as Promise<number>;
  const refused = async (query: string, key = keys.watcher!) => {
    const response = await get(server.base, `/v1/stream?${query}`, key);
    return { status: response.status, body: response.json as { success: boolean; status: string; error: string; message: string; request_id: string }, headers: response.headers };
  };
  /** usd_free written at `value`, and served at it on the plan's tier (what a stream opened now starts from). */
  const settle = async (value: string) => {
    write(value);
    await pollUntil(() => get(server.base, '/v1/rates/usd_free', keys.watcher), (r) => (r.json as { rates?: { value: unknown }[] }).rates?.[0]?.value === Number(value), 5000, 50, (r) => r.text.slice(0, 300));
  };

  before(async () => {
    const streaming = { refresh_interval_seconds: REFRESH_SECONDS, requests_per_minute: 100_000, requests_per_day: null, max_streams: 20 };
    const plans = { watcher: { ...streaming, services: ['detail', 'stream', 'alerts'] }, streamer: { ...streaming, services: ['detail', 'stream'] } };
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 300, poll_seconds: POLL_SECONDS }], plans }));
    write(PREV_CLOSE);
    // Yesterday's daily candle (in the server's zone): today's first value makes its close the previous close.
    const yesterday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Tehran' }).format(Date.now() - 86_400_000);
    const daily = join(dir.path, 'daily.csv');
    writeFileSync(daily, `key,date,open,high,low,close\nusd_free,${yesterday},${PREV_CLOSE},${PREV_CLOSE},${PREV_CLOSE},${PREV_CLOSE}\n`);
    // The database the server will use, made first so the candle can be imported before it starts.
    await (await Store.open({ databaseUrl: null, dataDir: join(dir.path, 'var') })).close();
    await cliOk(env, ['history', 'import', daily]);
    server = await startServer(env as Record<string, string>, { timeoutMs: 60_000 });
    for (const [username, plan] of [
      ['watcher', 'watcher'],
      ['streamer', 'streamer'],
    ]) {
      await cliOk(env, ['accounts', 'add', username!, '--plan', plan!]);
      keys[username!] = (JSON.parse((await cliOk(env, ['keys', 'issue', username!, '--json'])).stdout) as { key: string }).key;
    }
    await pollUntil(() => get(server.base, '/v1/rates/usd_free', keys.watcher), (r) => r.status === 200 && (r.json as { rates: { change_percent: unknown }[] }).rates[0]?.change_percent === 0, 10_000, 100, (r) => `${r.status} ${r.text.slice(0, 300)}`);
  });

  after(async () => {
    for (const stream of streams) stream.close();
    await server?.kill();
    dir.cleanup();
  });

  it('a crossing sends one alert within one refresh interval; staying true none; false then true a second', async (t) => {
    const stream = await open('keys=usd_free,eur_free&alerts=usd>1000500');
    // An alert follows the rates event it comes from: once a later one (a value still under the threshold) has
    // arrived, an alert on the snapshot at open would have too.
    write('1000100');
    await ratesAt(stream, 1000100);
    assert.deepEqual(alertsIn(stream), [], 'false at the snapshot: no alert');

    const crossedAt = write('1000600.5');
    const { value: alert, ms } = await pollUntil(async () => alertsIn(stream)[0], (found) => found !== undefined, WITHIN_MS, 10);
    t.diagnostic(`alert ${ms} ms after the source file was written (refresh interval ${REFRESH_SECONDS} s, source poll ${POLL_SECONDS} s)`);
    assert.ok(Date.now() - crossedAt <= WITHIN_MS, 'Date.now() - crossedAt <= WITHIN_MS');
    assert.equal(alert!.rule, 'usd>1000500', 'named as the caller wrote it');
    assert.equal(alert!.key, 'usd_free');
    assert.equal(alert!.value, 1000600.5);
    assert.equal(alert!.change_percent, 0.06, 'the change as the rate shows it: percent, two decimals');
    assert.match(alert!.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+03:30$/);
    const index = await ratesAt(stream, 1000600.5);
    assert.equal(stream.events[index + 1]?.event, 'alert', 'the alert follows the rates event that carries the crossing value');
    assert.equal(stream.events[index + 1]?.id, undefined, 'an alert carries no id: Last-Event-ID stays the snapshot version');

    write('1000700');
    await ratesAt(stream, 1000700);
    // A later rates event, the rule still true: an alert on 1000700 would have come before it.
    write('1000750');
    await ratesAt(stream, 1000750);
    assert.equal(alertsIn(stream).length, 1, 'still true: no second alert');

    write('1000400');
    await ratesAt(stream, 1000400);
    assert.equal(alertsIn(stream).length, 1, 'false: re-armed, no alert');
    write('1000501');
    await pollUntil(async () => alertsIn(stream), (found) => found.length === 2, WITHIN_MS, 10, (found) => JSON.stringify(found));
    assert.equal(alertsIn(stream)[1]!.value, 1000501);
  });

  it('a change_percent rule fires on the change from the previous close; a rule true at open fires once at open', async () => {
    await settle(PREV_CLOSE);
    const stream = await open('keys=usd_free&alerts=USD_FREE.change_percent>=2.5;usd_free<=1000000');
    const atOpen = await pollUntil(async () => alertsIn(stream), (found) => found.length === 1, 2000, 10, (found) => JSON.stringify(found));
    assert.equal(atOpen.value[0]!.rule, 'usd_free<=1000000', 'true at the first snapshot: one alert at open');
    write('1030000');
    const { value } = await pollUntil(async () => alertsIn(stream), (found) => found.length === 2, WITHIN_MS + 1000, 10, (found) => JSON.stringify(found));
    assert.deepEqual({ ...value[1]!, at: undefined }, { rule: 'USD_FREE.change_percent>=2.5', key: 'usd_free', value: 1030000, change_percent: 3, at: undefined });
    write('1010000');
    await ratesAt(stream, 1010000);
    assert.equal(alertsIn(stream).length, 2, 'change back to 1 %: re-armed, nothing sent');
  });

  it('in toman the threshold is in toman', async () => {
    await settle('1000000');
    const stream = await open('keys=usd_free&unit=toman&alerts=usd_free>100050');
    write('1000600');
    const { value } = await pollUntil(async () => alertsIn(stream), (found) => found.length === 1, WITHIN_MS + 1000, 10, (found) => JSON.stringify(found));
    assert.equal(value[0]!.value, 100060);
  });

  it('bad rules are 400 INVALID_PARAMETER naming the rule, more than 20 too; a plan without alerts is 403 SERVICE_NOT_ACTIVE', async () => {
    const cases: [string, RegExp][] = [
      ['keys=usd_free&alerts=gold_99k<5', /invalid alert rule "gold_99k<5": unknown reference "gold_99k"/],
      ['keys=usd_free&alerts=usd_free>>5', /invalid alert rule "usd_free>>5": ">5" is not a decimal number/],
      ['keys=usd_free&alerts=usd_free=5', /invalid alert rule "usd_free=5": no operator/],
      ['keys=usd_free&alerts=usd_free>1e6', /invalid alert rule "usd_free>1e6": "1e6" is not a decimal number/],
      ['keys=usd_free&alerts=usd_free>1;', /invalid alert rule "": empty/],
      ['keys=usd_free&alerts=usd_free.change>1', /invalid alert rule "usd_free.change>1": unknown reference "usd_free.change"/],
      ['keys=usd_free&alerts=eur_free>1', /invalid alert rule "eur_free>1": reference "eur_free" is not among the keys this stream follows/],
      [`keys=usd_free&alerts=${encodeURIComponent(Array.from({ length: 21 }, (_, i) => `usd_free>${i}`).join(';'))}`, /invalid alert rule "usd_free>20": more than 20 rules/],
      ['keys=usd_free&alerts=usd_free%3E1%3Busd%20%3E%201', /invalid alert rule "usd > 1": given twice/],
    ];
    for (const [query, message] of cases) {
      const { status, body, headers } = await refused(query);
      assert.equal(status, 400, query);
      assert.deepEqual([body.success, body.status, body.error], [false, 'error', 'INVALID_PARAMETER'], query);
      assert.match(body.message, /^Parameter "alerts": /, query);
      assert.match(body.message, message, query);
      assert.equal(headers.get('cache-control'), 'no-store');
    }
    const forbidden = await refused('keys=usd_free&alerts=usd_free>1', keys.streamer);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.error, 'SERVICE_NOT_ACTIVE');
    assert.equal(forbidden.body.message, 'The alerts service is not included in the streamer plan.');
    // The same account's plan allows the stream itself, and a bad rule is still the plan's error first.
    assert.equal((await refused('keys=usd_free&alerts=nonsense', keys.streamer)).body.error, 'SERVICE_NOT_ACTIVE');
    const plain = await openStream(server.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.streamer! });
    streams.push(plain);
    assert.equal(plain.status, 200);
  });
});
