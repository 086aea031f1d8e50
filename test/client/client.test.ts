/**
 * @nerkh/client against the real `nerkh serve` process on 127.0.0.1, with
 * accounts and keys made by the real CLI: every facade method, the error
 * mapping, and the push stream (snapshot, a change, reconnects with
 * Last-Event-ID after an idle connection and after a server restart).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { NerkhClient, NerkhError, type StreamAlertEvent, type StreamEvent } from '../../clients/typescript/src/index.js';
import { Store } from '../../src/store/store.js';
import { tempDir, writeSource } from '../support/env.js';
import { assertBuilt, catalogueSourceKeys, cliJson, cliOkEach, freePort, pollUntil, runCli, startServer, type ServerProcess } from '../e2e/access-helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

const PLANS = {
  tiny: { services: ['catalogue', 'detail', 'usage'], requests_per_minute: 3, refresh_interval_seconds: 1 },
  single: { services: ['detail', 'stream'], max_streams: 1, refresh_interval_seconds: 1 },
};

/** The first `count` events of `stream`, then stop; fewer when the stream's signal aborts first. */
async function take<Event extends StreamEvent | StreamAlertEvent>(stream: AsyncIterable<Event>, count: number, each: (event: Event, index: number) => void = () => {}): Promise<Event[]> {
  const events: Event[] = [];
  for await (const event of stream) {
    events.push(event);
    each(event, events.length - 1);
    if (events.length === count) break;
  }
  return events;
}

/** Ends a stream the test forgot, so a missing event fails the test instead of hanging it. */
const within = (ms: number) => AbortSignal.timeout(ms);

describe('@nerkh/client against a real nerkh serve', { timeout: 120_000 }, () => {
  const tmp = tempDir('nerkh-client-');
  const dataDir = join(tmp.path, 'data');
  const sourcePath = join(tmp.path, 'sources', 'alpha.json');
  const configPath = join(tmp.path, 'nerkh.config.json');
  const sourceKeys = catalogueSourceKeys();
  const values: Record<string, number> = { usd_free: 1_030_000, eur_free: 1_120_000, coin_emami: 880_000_000, gold_18k: 72_500_000 };
  // Each value keeps its own time until it changes, so a stream's `rates` event holds only what changed.
  const stamps: Record<string, { value: number; updated_at: string }> = {};
  const writeValues = () => {
    for (const [key, value] of Object.entries(values)) if (stamps[key]?.value !== value) stamps[key] = { value, updated_at: new Date().toISOString() };
    writeSource(sourcePath, Object.fromEntries(Object.entries(stamps).map(([key, item]) => [sourceKeys.get(key)!, item])));
  };
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NERKH_') && name !== 'NODE_TEST_CONTEXT')),
    NERKH_HOST: '127.0.0.1',
    NERKH_DATA_DIR: dataDir,
    NERKH_CONFIG: configPath,
  };
  const keys: Record<string, string> = {};
  const servers: ServerProcess[] = [];
  let port: number;
  let server: ServerProcess;
  const client = (user: keyof typeof keys | null, options: Partial<ConstructorParameters<typeof NerkhClient>[0]> = {}) =>
    new NerkhClient({ baseUrl: server.base, ...(user === null ? {} : { apiKey: keys[user] }), ...options });
  const start = async () => {
    server = await startServer(env, port);
    servers.push(server);
  };
  const killAll = () => servers.forEach((s) => s.kill());
  process.once('exit', killAll);

  before(async () => {
    assertBuilt();
    mkdirSync(join(tmp.path, 'sources'), { recursive: true });
    writeValues();
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 300, poll_seconds: 0.2 }], plans: PLANS }));
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    const accounts = { live: 'enterprise', basic: 'basic', tiny: 'tiny', single: 'single' };
    await cliOkEach(env, Object.entries(accounts).map(([user, plan]) => ['accounts', 'add', user, '--plan', plan]));
    for (const user of Object.keys(accounts)) keys[user] = (await cliJson<{ key: string }>(env, ['keys', 'issue', user])).key;
    port = await freePort();
    await start();
  });
  after(() => {
    killAll();
    process.removeListener('exit', killAll);
    tmp.cleanup();
  });

  it('catalogue: the references, filtered by the documented query', async () => {
    const { data, meta } = await client('live').catalogue({ category: 'currency' });
    assert.equal(data.success, true);
    assert.ok(data.count > 0 && data.references.every((reference) => reference.category === 'currency'), 'data.count > 0 && data.references.every((reference) => reference.category === \'currency\')');
    assert.ok(data.references.some((reference) => reference.key === 'usd_free'), 'data.references.some((reference) => reference.key === \'usd_free\')');
    assert.match(meta.etag ?? '', /^(W\/)?"/);
    assert.ok(meta.requestId, 'meta.requestId');
  });

  it('as a tarball (npm run tarball, as its README says) installed offline in a project outside the repository, it calls this server', async () => {
    // Outside the repository and with an empty npm cache: nothing can come from the workspace, the cache or the network.
    const outside = tempDir('nerkh-client-outside-');
    try {
      const packed = await run('npm', ['run', '--silent', 'tarball', '-w', '@nerkh/client', '--', outside.path], { cwd: ROOT, env });
      const tarball = packed.stdout.trim().split('\n').pop()!;
      assert.match(tarball, /nerkh-client-\d+\.\d+\.\d+\.tgz$/, packed.stdout + packed.stderr);
      const app = join(outside.path, 'app');
      mkdirSync(app);
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
      const cache = join(outside.path, 'empty-cache');
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--cache', cache, tarball], { cwd: app, env });
      writeFileSync(
        join(app, 'app.js'),
        `import { NerkhClient } from '@nerkh/client';\nconst nerkh = new NerkhClient({ baseUrl: process.env.BASE, apiKey: process.env.KEY });\nconst { data } = await nerkh.rates(['usd_free']);\nconsole.log(JSON.stringify(data.rates.map((rate) => [rate.key, rate.value])));\n`,
      );
      const answer = await run(process.execPath, ['app.js'], { cwd: app, env: { ...env, BASE: server.base, KEY: keys.live! } });
      assert.deepEqual(JSON.parse(answer.stdout), [['usd_free', values.usd_free]]);
    } finally {
      outside.cleanup();
    }
  });

  it('rates: one key, several keys, aliases; rate-limit headers and ETag exposed', async () => {
    const live = client('live');
    const one = await live.rates('usd_free');
    assert.deepEqual(one.data.rates.map((rate) => [rate.key, rate.value]), [['usd_free', values.usd_free]]);
    const alias = await live.rates('usd');
    assert.equal(alias.data.rates[0]!.key, 'usd_free');
    const several = await live.rates(['usd_free', 'coin_emami', 'gold_18k']);
    assert.deepEqual(several.data.rates.map((rate) => rate.key), ['usd_free', 'coin_emami', 'gold_18k']);
    assert.equal(several.data.rates[1]!.value, values.coin_emami);
    assert.ok(several.meta.etag, 'several.meta.etag');
    assert.equal(several.meta.rateLimit?.limit, 6000);
    assert.ok(several.meta.rateLimit!.remaining < 6000 && several.meta.rateLimit!.reset > 0, 'several.meta.rateLimit!.remaining < 6000 && several.meta.rateLimit!.reset > 0');
    assert.match(several.meta.rateLimit!.policy ?? '', /minute/);
    assert.match(several.meta.cacheControl ?? '', /max-age/);
  });

  it('rates at a past moment answer from history, a Date sent as its ISO text', async () => {
    // A value served a day ago, imported with the CLI; asked two minutes later, its minute has ended.
    const servedAt = Math.floor((Date.now() - 86_400_000) / 60_000) * 60_000 + 5000;
    const csv = join(tmp.path, 'past.csv');
    writeFileSync(csv, `key,time,value\nusd_free,${new Date(servedAt).toISOString()},1029000\n`);
    // The server's own history writes (the demo's past at start) can hold SQLite's write lock past the CLI's busy wait under load.
    for (let attempt = 1; ; attempt++) {
      const result = await runCli(env, ['history', 'import', csv]);
      if (result.code === 0) break;
      assert.ok(attempt < 5 && /database is locked/.test(result.stderr), `history import exited ${result.code}: ${result.stderr}`);
    }
    const { data } = await client('live').rates('usd_free', { at: new Date(servedAt + 120_000) });
    const rate = data.rates[0]!;
    assert.equal(rate.status, 'historical');
    assert.equal(rate.value, 1_029_000);
    assert.equal(Date.parse(rate.updated_at!), servedAt);
  });

  it('history: candles of one key over the documented query', async () => {
    await client('live').rates('eur_free');
    const { value } = await pollUntil(() => client('live').history('eur_free', { interval: '1m', from: new Date(Date.now() - 3_600_000) }), (r) => r.data.count > 0, 5000, 200, (r) => JSON.stringify(r.data));
    assert.equal(value.data.key, 'eur_free');
    assert.equal(value.data.interval, '1m');
    assert.equal(value.data.candles.at(-1)!.close, values.eur_free);
    await assert.rejects(client('live').history('eur_free', { interval: '1m', from: '2000-01-01' }), (error: NerkhError) => error.status === 400 && error.code === 'INVALID_PARAMETER');
  });

  it('usage: the account’s requests per day and service', async () => {
    const { value } = await pollUntil(() => client('live').usage({ days: 7 }), (r) => r.data.services.some((s) => s.service === 'detail' && s.requests >= 3), 5000, 250, (r) => JSON.stringify(r.data));
    assert.equal(value.data.account, 'live');
    assert.equal(value.data.plan, 'enterprise');
    assert.ok(value.data.daily.at(-1)!.requests >= 3, 'value.data.daily.at(-1)!.requests >= 3');
  });

  it('status: the sources as the server sees them', async () => {
    const { data } = await client('live').status();
    assert.equal(data.success, true);
    assert.deepEqual(data.sources.map((source) => source.name), ['alpha']);
  });

  it('convert: an amount of one reference in another, rial or toman, digit for digit', async () => {
    const live = client('live');
    // 3.5 g × 72,500,000 rial ÷ 10 rial a toman.
    const gold = await live.convert('gold_18k', 'IRT', '3.5');
    assert.equal(gold.data.result, 25_375_000);
    assert.deepEqual(gold.data.rates.map((rate) => [rate.key, rate.value]), [['gold_18k', values.gold_18k]]);
    assert.ok(gold.meta.etag, 'gold.meta.etag');
    // 1,120,000 ÷ 1,030,000 = 1.0873786…: half-even to 6 decimals; a number amount is sent as its text.
    const euro = await live.convert('eur', 'usd', 1, { unit: 'toman' });
    assert.equal(euro.data.result, 1.087379);
    assert.deepEqual(euro.data.rates.map((rate) => [rate.key, rate.value, rate.currency]), [['eur_free', 112_000, 'IRT'], ['usd_free', 103_000, 'IRT']]);
    await assert.rejects(live.convert('gold_ounce', 'IRR', 1), (error: NerkhError) => error.status === 400 && error.code === 'INVALID_PARAMETER' && /one currency/.test(error.message));
  });

  it('calendar: the closed days of a market, Gregorian and Jalali, with the reason; every rate carries its market', async () => {
    const live = client('live');
    const { data } = await live.calendar({ market: 'crypto', from: '1406/01/01', to: '1406/01/31' });
    assert.deepEqual([data.market, data.from, data.to, data.closed], ['crypto', '2027-03-21', '2027-04-20', []]);
    await assert.rejects(live.calendar({ from: '2026-01-01', to: '2027-06-01' }), (error: NerkhError) => error.status === 400 && error.code === 'INVALID_PARAMETER');
    const rate = (await live.rates('usd_free')).data.rates[0]!;
    assert.equal(rate.market?.name, 'tehran');
  });

  it('jewellery: gold, making, profit, VAT and the total rounded once', async () => {
    const live = client('live');
    // gold 2.5 × 72,500,000; making 15 %; profit 7 % of gold + making; VAT 10 % of making + profit: 227,205,937.5 → 227,205,938.
    const rial = await live.jewellery({ weight: '2.5', making_percent: 15 });
    assert.deepEqual([rial.data.gold, rial.data.making, rial.data.profit, rial.data.vat, rial.data.total], [181_250_000, 27_187_500, 14_590_625, 4_177_812.5, 227_205_938]);
    assert.equal(rial.data.karat, 18);
    assert.equal(rial.data.currency, 'IRR');
    // In toman: 22,720,593.75 → 22,720,594.
    const toman = await live.jewellery({ weight: 2.5, making_percent: '15', karat: 18, profit_percent: 7, vat_percent: '10', unit: 'toman' });
    assert.deepEqual([toman.data.gram_price, toman.data.vat, toman.data.total, toman.data.currency], [7_250_000, 417_781.25, 22_720_594, 'IRT']);
    await assert.rejects(live.jewellery({ weight: '-1', making_percent: 0 }), (error: NerkhError) => error.status === 400 && /"weight"/.test(error.message));
  });

  it('errors: 401, 403 and 404 as one NerkhError with the envelope’s code and request id', async () => {
    const mapped = async (call: Promise<unknown>, status: number, code: string) => {
      const error = await call.then(
        () => assert.fail(`expected ${status} ${code}`),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof NerkhError, String(error));
      assert.equal(error.status, status);
      assert.equal(error.code, code);
      assert.ok(error.message.length > 0 && !error.message.startsWith('HTTP '), error.message);
      assert.match(error.requestId ?? '', /\S/);
      assert.equal(error.requestId, error.headers?.get('x-request-id'));
      return error;
    };
    await mapped(client(null).rates('usd_free'), 401, 'API_KEY_MISSING');
    await mapped(client(null, { apiKey: 'nrk_' + 'x'.repeat(32) }).rates('usd_free'), 401, 'API_KEY_INVALID');
    await mapped(client('basic').status(), 403, 'SERVICE_NOT_ACTIVE');
    await mapped(client('basic').history('usd_free'), 403, 'SERVICE_NOT_ACTIVE');
    await mapped(client('live').rates('no_such_reference'), 404, 'RATE_NOT_FOUND');
    await mapped(client('live').rates(Array.from({ length: 11 }, (_, i) => `k${i}`)), 400, 'RATE_KEYS_LIMIT_EXCEEDED');
    const streamError = await take(client('basic').stream({ keys: 'usd_free', signal: within(10_000) }), 1).then(
      () => assert.fail('a basic key opened a stream'),
      (caught: unknown) => caught,
    );
    assert.ok(streamError instanceof NerkhError && streamError.status === 403 && streamError.code === 'SERVICE_NOT_ACTIVE', String(streamError));
  });

  it('429: code, Retry-After in seconds and the spent limit; a wait past the bound is thrown at once', async () => {
    const tiny = client('tiny', { retries: 0 });
    // The account's other requests this minute count too: spend whatever is left.
    let error: unknown = null;
    for (let i = 0; i < 5 && error === null; i++) error = await tiny.rates('usd_free').then(() => null, (caught: unknown) => caught);
    assert.ok(error instanceof NerkhError, String(error));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'RATE_LIMIT_EXCEEDED');
    assert.ok(error.retryAfter !== null && error.retryAfter >= 1 && error.retryAfter <= 60, String(error.retryAfter));
    assert.equal(error.headers?.get('x-ratelimit-remaining'), '0');

    // Default retries, but a bound below the server's wait: no sleeping through it (a new minute may have begun: spend it again).
    const bounded = client('tiny', { maxRetryWaitMs: 0 });
    let last: unknown = null;
    for (let i = 0; i < 5 && last === null; i++) {
      const started = Date.now();
      last = await bounded.rates('usd_free').then(() => null, (caught: unknown) => caught);
      assert.ok(Date.now() - started < 2000, `answered after ${Date.now() - started} ms`);
    }
    assert.ok(last instanceof NerkhError && last.status === 429 && last.retryAfter! >= 1, String(last));
  });

  it('a body that is not the envelope (a proxy’s page) is UNKNOWN_ERROR with the status and x-request-id', async () => {
    const proxy: Server = createServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html', 'x-request-id': 'edge-42' });
      response.end('<html><body>Bad gateway</body></html>');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const address = proxy.address() as { port: number };
    try {
      const nerkh = new NerkhClient({ baseUrl: `http://127.0.0.1:${address.port}`, apiKey: keys.live });
      await assert.rejects(nerkh.rates('usd_free'), (error: NerkhError) => {
        assert.equal(error.status, 502);
        assert.equal(error.code, 'UNKNOWN_ERROR');
        assert.equal(error.requestId, 'edge-42');
        assert.equal(error.retryAfter, null);
        assert.match(error.message, /^HTTP 502/);
        return true;
      });
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
    // Nothing listening: a NerkhError too, status 0.
    const closed = new NerkhClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    await assert.rejects(closed.status(), (error: NerkhError) => error instanceof NerkhError && error.status === 0 && error.code === 'NETWORK_ERROR');
  });

  it('stream: a snapshot of the requested keys, then only the rates that change', async () => {
    const stream = client('live').stream({ keys: ['usd_free', 'eur_free'], signal: within(15_000) });
    const events = await take(stream, 2, (_event, index) => {
      if (index === 0) {
        values.usd_free = 1_031_500;
        writeValues();
      }
    });
    assert.equal(events[0]!.type, 'snapshot');
    assert.deepEqual(events[0]!.data.rates.map((rate) => rate.key), ['usd_free', 'eur_free']);
    assert.ok(Number(events[0]!.id) > 0, 'Number(events[0]!.id) > 0');
    assert.equal(stream.retryMs, 3000, "the server's retry: is in force");
    assert.equal(events[1]!.type, 'rates');
    assert.deepEqual(events[1]!.data.rates.map((rate) => [rate.key, rate.value]), [['usd_free', 1_031_500]]);
    assert.ok(Number(events[1]!.id) > Number(events[0]!.id), 'Number(events[1]!.id) > Number(events[0]!.id)');
  });

  it('stream with alerts: typed alert events, one at open for a rule already true, one per crossing; a bad rule is a NerkhError naming it', async () => {
    const stream = client('live').stream({ keys: ['usd_free', 'eur_free'], alerts: ['usd_free>1031600', 'eur>=1'], signal: within(15_000) });
    const events = await take(stream, 4, (event) => {
      if (event.type === 'alert' && event.data.key === 'eur_free') {
        values.usd_free = 1_031_700;
        writeValues();
      }
    });
    assert.deepEqual(
      events.map((event) => event.type),
      ['snapshot', 'alert', 'rates', 'alert'],
    );
    const alerts = events.filter((event): event is StreamAlertEvent => event.type === 'alert');
    // Narrowed on `type`, the data is the alert's: these are typed reads, checked by tsc.
    assert.deepEqual(
      alerts.map((event) => [event.data.rule, event.data.key, event.data.value, event.id]),
      [
        ['eur>=1', 'eur_free', 1_120_000, null],
        ['usd_free>1031600', 'usd_free', 1_031_700, null],
      ],
    );
    assert.equal(typeof alerts[1]!.data.at, 'string');
    assert.equal(stream.lastEventId, events[2]!.id, 'Last-Event-ID stays the last rates event');

    const refused = await take(client('live').stream({ keys: 'usd_free', alerts: 'usd_free>>1', signal: within(10_000) }), 1).then(
      () => assert.fail('a bad rule opened a stream'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof NerkhError && refused.status === 400 && refused.code === 'INVALID_PARAMETER', String(refused));
    assert.match(refused.message, /invalid alert rule "usd_free>>1"/);
  });

  it('stream: one stream past the plan’s cap is TOO_MANY_STREAMS at once; aborting ends the loop quietly', async () => {
    const controller = new AbortController();
    const first = client('single').stream({ keys: 'usd_free', signal: controller.signal });
    const iterator = first[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.type, 'snapshot');
    const started = Date.now();
    const second = await take(client('single').stream({ keys: 'usd_free', signal: within(10_000) }), 1).then(
      () => assert.fail('a second stream opened'),
      (caught: unknown) => caught,
    );
    assert.ok(second instanceof NerkhError && second.status === 429 && second.code === 'TOO_MANY_STREAMS', String(second));
    assert.ok(Date.now() - started < 2000, 'not retried');
    const pending = iterator.next();
    controller.abort();
    assert.deepEqual(await pending, { done: true, value: undefined });
  });

  /** A live client whose every connection's Last-Event-ID header (null when none) is kept in `sent`. */
  function clientSeeingLastEventIds(): { nerkh: NerkhClient; sent: (string | null)[] } {
    const sent: (string | null)[] = [];
    const nerkh = client('live', {
      fetch: (request) => {
        sent.push(request.headers.get('last-event-id'));
        return fetch(request);
      },
    });
    return { nerkh, sent };
  }

  it('stream: a silent connection is replaced after the server’s retry delay, sending Last-Event-ID', async () => {
    const { nerkh, sent } = clientSeeingLastEventIds();
    const stream = nerkh.stream({ keys: 'gold_18k', idleTimeoutMs: 400, signal: within(15_000) });
    const started = Date.now();
    const events = await take(stream, 2);
    assert.deepEqual(events.map((event) => event.type), ['snapshot', 'snapshot'], 'a reconnect starts with a fresh snapshot');
    assert.deepEqual(sent, [null, events[0]!.id]);
    assert.ok(Date.now() - started >= 3000, `reconnected after ${Date.now() - started} ms, before the 3 s retry`);
    assert.equal(stream.connections, 2);
  });

  it('stream: survives a server restart, resuming with Last-Event-ID on the new process', async () => {
    const { nerkh, sent } = clientSeeingLastEventIds();
    const stream = nerkh.stream({ keys: ['usd_free', 'coin_emami'], signal: within(30_000) });
    let firstPid = 0;
    const events = await take(stream, 2, (_event, index) => {
      if (index === 0) {
        firstPid = server.child.pid!;
        // SIGTERM closes every open stream at once; the client retries until the new process answers.
        void server.stop().then(async () => {
          values.coin_emami = 881_000_000;
          writeValues();
          await start();
        });
      }
    });
    assert.notEqual(server.child.pid, firstPid, 'a new process answered');
    assert.deepEqual(events.map((event) => event.type), ['snapshot', 'snapshot']);
    assert.equal(events[1]!.data.rates.find((rate) => rate.key === 'coin_emami')!.value, 881_000_000);
    assert.equal(sent[0], null);
    assert.ok(sent.length >= 2 && sent.slice(1).every((id) => id === events[0]!.id), JSON.stringify(sent));
  });
});
