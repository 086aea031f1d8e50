import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { ManualClock } from '../../src/domain/clock.js';
import { eventually } from '../support/env.js';
import { startHarness, type Harness } from '../support/harness.js';
import { fetchRaw } from '../support/raw-http.js';

/** Headers that legitimately differ between two answers to the same request. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'ratelimit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'transfer-encoding']);

interface Exchange {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** One request over real HTTP with node:http, the path sent exactly as given. */
function send(base: string, path: string, headers: Record<string, string> = {}, method = 'GET', localAddress?: string): Promise<Exchange> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, path, method, headers, localAddress, timeout: 5000 }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer to ${path} within 5 s`)));
    outgoing.on('error', reject).end();
  });
}

/** `/v1/rates/usd…` as `/v1/rates/%75sd…`: the same keys, a URL only Fastify's route takes. */
function percentEncodeFirstKeyCharacter(path: string): string {
  const at = '/v1/rates/'.length;
  return path.slice(0, at) + '%' + path.charCodeAt(at).toString(16).toUpperCase() + path.slice(at + 1);
}

/** Two answers to the same request, one per path: same status, body and headers (max-age may tick over between them). */
function assertSameAnswer(first: Exchange, second: Exchange, options: { secondHasNoBody?: boolean } = {}) {
  assert.equal(first.status, second.status, `${first.body} vs ${second.body}`);
  if (options.secondHasNoBody) assert.equal(second.body, '');
  else assert.deepEqual(comparableBody(first.body), comparableBody(second.body));
  const [a, b] = [comparableHeaders(first.headers), comparableHeaders(second.headers)];
  const maxAge = (headers: Record<string, string>) => Number(/max-age=(\d+)/.exec(headers['cache-control'] ?? '')?.[1] ?? NaN);
  if (a['cache-control']?.startsWith('private')) {
    assert.ok(Math.abs(maxAge(a) - maxAge(b)) <= 1, `${a['cache-control']} vs ${b['cache-control']}`);
    delete a['cache-control'];
    delete b['cache-control'];
  }
  assert.deepEqual(a, b);
}

function comparableBody(text: string): unknown {
  if (text === '') return '';
  const body = JSON.parse(text) as Record<string, unknown>;
  delete body.generated_at;
  // The webservice feed's server_time moves with generated_at (the two answers may fall a second apart).
  delete body.server_time;
  delete body.request_id;
  return body;
}

function comparableHeaders(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([name]) => !VOLATILE.has(name))
      .map(([name, value]) => [name, String(value)])
      .sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
}

/**
 * GET /v1/rates/{keys} is answered on node:http before Fastify routes it; `inject`
 * goes through the Fastify route. Every case must come out the same both ways.
 */
describe('detail: raw path and Fastify route agree', () => {
  let harness: Harness;
  let base: string;
  const keys: Record<string, string> = {};
  /**
   * The time stands still while the two ways are asked, so both answers carry the same
   * `generated_at` (and compress to the same length), and moves a minute on between
   * comparisons: each starts a new failed-attempts window, so the 31st unknown key of a
   * minute never falls between the two requests of one comparison.
   */
  const clock = new ManualClock();
  const nextMinute = () => clock.advance(60_000);

  before(async () => {
    harness = await startHarness({ runtime: { clock } });
    keys.enterprise = (await harness.keyFor('big-board')).key;
    keys.basic = (await harness.keyFor('small-board', 'basic', { references: ['usd_free', 'coin_emami'] })).key;
    keys.suspended = (await harness.keyFor('gone-board', 'pro', { status: 'suspended' })).key;
    keys.strict = (await harness.keyFor('web-board', 'pro', { origins: ['https://board.example'] })).key;
    keys.limited = (await harness.keyFor('tiny-board', 'basic', { overrides: { requests_per_minute: 2 } })).key;
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => harness.close());
  beforeEach(nextMinute);

  const cases: { name: string; path: string; headers: (k: Record<string, string>) => Record<string, string> }[] = [
    { name: 'ten keys', path: '/v1/rates/usd_free,eur_free,coin_emami,gold_18k,gold_ounce,sekkeh,USD_FREE,ons,18ayar,nope', headers: (k) => ({ 'x-api-key': k.enterprise! }) },
    { name: 'aliases, spaces and case', path: '/v1/rates/Sekkeh,%20usd_free', headers: (k) => ({ 'x-api-key': k.enterprise! }) },
    { name: 'all unknown', path: '/v1/rates/nothing,none', headers: (k) => ({ 'x-api-key': k.enterprise! }) },
    { name: 'empty key', path: '/v1/rates/usd_free,,eur_free', headers: (k) => ({ 'x-api-key': k.enterprise! }) },
    { name: 'eleven keys', path: '/v1/rates/a,b,c,d,e,f,g,h,i,j,k', headers: (k) => ({ 'x-api-key': k.enterprise! }) },
    { name: 'no key', path: '/v1/rates/usd_free', headers: () => ({}) },
    { name: 'unknown key', path: '/v1/rates/usd_free', headers: () => ({ 'x-api-key': 'nrk_' + 'Z'.repeat(32) }) },
    { name: 'suspended account', path: '/v1/rates/usd_free', headers: (k) => ({ 'x-api-key': k.suspended! }) },
    { name: 'outside the allowance', path: '/v1/rates/usd_free,gold_ounce', headers: (k) => ({ 'x-api-key': k.basic! }) },
    { name: 'nothing allowed', path: '/v1/rates/gold_ounce', headers: (k) => ({ 'x-api-key': k.basic! }) },
    { name: 'origin allowed', path: '/v1/rates/usd_free', headers: (k) => ({ 'x-api-key': k.strict!, origin: 'https://board.example' }) },
    { name: 'origin refused', path: '/v1/rates/usd_free', headers: (k) => ({ 'x-api-key': k.strict!, origin: 'https://elsewhere.example' }) },
    { name: 'sane request id', path: '/v1/rates/usd_free', headers: (k) => ({ 'x-api-key': k.enterprise!, 'x-request-id': 'board-7' }) },
  ];

  for (const testCase of cases) {
    it(testCase.name, async () => {
      const headers = testCase.headers(keys);
      const raw = await send(base, testCase.path, headers);
      const injected = await harness.app.inject({ url: testCase.path, headers });
      assertSameAnswer(raw, { status: injected.statusCode, headers: injected.headers, body: injected.body });
      // Over HTTP the route answers HEAD and percent-encoding (which the raw path leaves to it) the same way; an empty query string changes nothing.
      assertSameAnswer(raw, await send(base, testCase.path, headers, 'HEAD'), { secondHasNoBody: true });
      assertSameAnswer(raw, await send(base, testCase.path + '?', headers));
      assertSameAnswer(raw, await send(base, percentEncodeFirstKeyCharacter(testCase.path), headers));
      if (headers['x-request-id']) assert.equal(raw.headers['x-request-id'], headers['x-request-id']);
    });
  }

  it('query strings (unit, expand, bad values) come out the same both ways', async () => {
    const headers = { 'x-api-key': keys.enterprise! };
    const paths = [
      '/v1/rates/usd_free,coin_emami,gold_ounce?unit=toman',
      '/v1/rates/usd_free,gold_ounce?expand=sources',
      '/v1/rates/usd_free?unit=toman&expand=sources',
      '/v1/rates/usd_free?unit=%74oman',
      '/v1/rates/usd_free?unit=usd',
      '/v1/rates/usd_free?foo=1',
    ];
    for (const path of paths) {
      const raw = await send(base, path, headers);
      const injected = await harness.app.inject({ url: path, headers });
      assertSameAnswer(raw, { status: injected.statusCode, headers: injected.headers, body: injected.body });
      assertSameAnswer(raw, await send(base, percentEncodeFirstKeyCharacter(path), headers));
    }
  });

  it('the catalogue comes out the same both ways, with any query and any key', async () => {
    const queries = ['', '?', '?category=coin', `?q=${encodeURIComponent('سكه')}`, '?in_plan=true', '?in_plan=false&category=currency', '?category=nope', '?q=', '?in_plan=yes', '?foo=1', '?q=a&q=b'];
    for (const key of [keys.enterprise!, keys.basic!, keys.suspended!, 'nrk_' + 'Q'.repeat(32)]) {
      for (const query of queries) {
        const path = `/v1/rates${query}`;
        const headers = { 'x-api-key': key, 'accept-encoding': 'gzip', origin: 'https://board.example' };
        nextMinute();
        const raw = await fetchRaw(base, path, headers);
        const injected = await harness.app.inject({ url: path, headers });
        const text = (body: Buffer, encoding: unknown) => (encoding === 'gzip' ? gunzipSync(body) : body).toString();
        assertSameAnswer(
          { status: raw.status, headers: raw.headers, body: text(raw.body, raw.headers['content-encoding']) },
          { status: injected.statusCode, headers: injected.headers, body: text(injected.rawPayload, injected.headers['content-encoding']) },
        );
      }
    }
  });

  it('the webservice feed comes out the same both ways: own, stranger\'s and unknown usernames, any query', async () => {
    const queries = ['', '?', '?unit=toman', '?unit=usd', '?foo=1', '?unit=rial&unit=toman'];
    for (const key of [keys.enterprise!, keys.basic!, keys.suspended!, 'nrk_' + 'Q'.repeat(32)]) {
      for (const username of ['big-board', 'small-board', 'nobody']) {
        for (const query of queries) {
          const path = `/webservice/${username}${query}`;
          const headers = { 'x-api-key': key, 'accept-encoding': 'gzip', origin: 'https://board.example' };
          nextMinute();
          const raw = await fetchRaw(base, path, headers);
          const injected = await harness.app.inject({ url: path, headers });
          const text = (body: Buffer, encoding: unknown) => (encoding === 'gzip' ? gunzipSync(body) : body).toString();
          const rawAnswer = { status: raw.status, headers: raw.headers, body: text(raw.body, raw.headers['content-encoding']) };
          assertSameAnswer(rawAnswer, { status: injected.statusCode, headers: injected.headers, body: text(injected.rawPayload, injected.headers['content-encoding']) });
          // A percent-encoded username is left to the Fastify route, which reads it the same.
          const encoded = await fetchRaw(base, `/webservice/%${username.charCodeAt(0).toString(16)}${username.slice(1)}${query}`, headers);
          assertSameAnswer(rawAnswer, { status: encoded.status, headers: encoded.headers, body: text(encoded.body, encoded.headers['content-encoding']) });
        }
      }
    }
  });

  it('a cached answer still carries the time it was served', async () => {
    const headers = { 'x-api-key': keys.enterprise! };
    const generatedAt = async (viaFastify: boolean) =>
      JSON.parse(viaFastify ? (await harness.app.inject({ url: '/v1/rates/coin_emami', headers })).body : await (await fetch(`${base}/v1/rates/coin_emami`, { headers })).text()).generated_at as string;
    const first = [await generatedAt(false), await generatedAt(true)];
    clock.advance(1100);
    const second = [await generatedAt(false), await generatedAt(true)];
    assert.notEqual(second[0], first[0]);
    assert.notEqual(second[1], first[1]);
    assert.equal(Math.floor(Date.parse(second[0]!) / 1000), Math.floor(clock.now() / 1000), second[0]);
  });

  it('If-None-Match gives 304 both ways', async () => {
    const first = await fetch(`${base}/v1/rates/usd_free`, { headers: { 'x-api-key': keys.enterprise! } });
    const etag = first.headers.get('etag')!;
    const raw = await fetch(`${base}/v1/rates/usd_free`, { headers: { 'x-api-key': keys.enterprise!, 'if-none-match': etag } });
    const viaFastify = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': keys.enterprise!, 'if-none-match': etag } });
    assert.equal(raw.status, 304);
    assert.equal(viaFastify.statusCode, 304);
    assert.equal(raw.headers.get('etag'), viaFastify.headers.etag);
  });

  it('one limiter for both: the raw path and the Fastify route share the window', async () => {
    const headers = { 'x-api-key': keys.limited! };
    assert.equal((await fetch(`${base}/v1/rates/usd_free`, { headers })).status, 200);
    assert.equal((await harness.app.inject({ url: '/v1/rates/usd_free', headers })).statusCode, 200);
    const raw = await fetch(`${base}/v1/rates/usd_free`, { headers });
    assert.equal(raw.status, 429);
    assert.ok(Number(raw.headers.get('retry-after')) >= 1, 'Number(raw.headers.get(\'retry-after\')) >= 1');
    const viaFastify = await harness.app.inject({ url: '/v1/rates/usd_free', headers });
    assert.equal(viaFastify.statusCode, 429);
    assert.deepEqual(comparableBody(await raw.text()), comparableBody(viaFastify.body));
  });

  it('keeps a connection going after requests with and without bodies', { timeout: 10_000 }, async () => {
    const { hostname, port } = new URL(base);
    const head = `Host: ${hostname}\r\nx-api-key: ${keys.enterprise!}\r\n`;
    // Pipelined on one socket: a GET with a body (larger than a stream buffers), one with a chunked body, then plain GETs.
    const body = 'x'.repeat(256 * 1024);
    const requests =
      `GET /v1/rates/usd_free HTTP/1.1\r\n${head}content-length: ${body.length}\r\n\r\n${body}` +
      `GET /v1/rates/eur_free HTTP/1.1\r\n${head}transfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n` +
      `GET /v1/rates/coin_emami HTTP/1.1\r\n${head}\r\n`.repeat(20) +
      `GET /v1/rates/gold_18k HTTP/1.1\r\n${head}connection: close\r\n\r\n`;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(requests));
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text)).on('error', reject);
    });
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    assert.deepEqual(statuses, Array(23).fill('200'));
    const keysServed = [...answer.matchAll(/"key":"(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual([keysServed[0], keysServed[1], keysServed[2], keysServed.at(-1)], ['usd_free', 'eur_free', 'coin_emami', 'gold_18k']);
  });

  it('meters raw-path requests like any other', async () => {
    const accountId = (await harness.store.accounts.find('big-board'))!.id;
    const usage = () => harness.app.inject({ url: '/v1/usage', headers: { 'x-api-key': keys.enterprise! } });
    // A usage request writes everything counted so far before it answers.
    await usage();
    const before = await harness.store.usage.total(accountId);
    await fetch(`${base}/v1/rates/usd_free`, { headers: { 'x-api-key': keys.enterprise! } });
    await fetch(`${base}/v1/rates/nope_nope`, { headers: { 'x-api-key': keys.enterprise! } });
    // The meter's own flush (twice a second) writes them: a second report within the second would be the first one again.
    const after = await eventually(async () => {
      const total = await harness.store.usage.total(accountId);
      return total.ok + total.errors >= before.ok + before.errors + 3 ? total : null;
    }, 3_000);
    // The usage request itself (counted after it answered), one good detail, one failed.
    assert.deepEqual({ ok: after!.ok - before.ok, errors: after!.errors - before.errors }, { ok: 2, errors: 1 });
  });

  describe('order of checks for any URL: key, plan, limit, then validation, on both paths', () => {
    const long = 'usd_free,' + 'x'.repeat(3000);
    const cases: { name: string; path: string; code: string }[] = [
      { name: 'keys segment over 2,048 characters (raw path)', path: `/v1/rates/${long}`, code: 'INVALID_KEYS' },
      { name: 'keys segment over 2,048 characters (with a query string)', path: `/v1/rates/${long}?`, code: 'INVALID_KEYS' },
      { name: 'keys segment over 2,048 characters (percent-encoded)', path: `/v1/rates/%75${long.slice(1)}`, code: 'INVALID_KEYS' },
      { name: 'malformed percent-encoding', path: '/v1/rates/%E0%A4%A', code: 'INVALID_KEYS' },
      { name: 'a stray percent sign', path: '/v1/rates/usd_free%', code: 'INVALID_KEYS' },
      { name: 'an unknown query parameter', path: '/v1/rates/usd_free?foo=1', code: 'INVALID_PARAMETER' },
    ];
    // Its own client address, so these failed keys never meet the throttle of the tests above.
    const from = '127.0.0.7';
    const assertEnvelope = (answer: Exchange, status: number, code: string) => {
      assert.equal(answer.status, status, answer.body);
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      assert.equal(body.error, code);
      assert.equal(body.request_id, answer.headers['x-request-id']);
      assert.equal(answer.headers['cache-control'], 'no-store');
    };

    for (const [i, testCase] of cases.entries()) {
      it(testCase.name, async () => {
        const spent = (await harness.keyFor(`spent-board-${i}`, 'enterprise', { overrides: { requests_per_minute: 1 } })).key;
        const order = await harness.keyFor(`order-board-${i}`, 'enterprise');
        const suspended = (await harness.keyFor(`stopped-board-${i}`, 'enterprise', { status: 'suspended' })).key;
        assertEnvelope(await send(base, testCase.path, {}, 'GET', from), 401, 'API_KEY_MISSING');
        assertEnvelope(await send(base, testCase.path, { 'x-api-key': 'nrk_' + 'Q'.repeat(32) }, 'GET', from), 401, 'API_KEY_INVALID');
        assertEnvelope(await send(base, testCase.path, { 'x-api-key': suspended }, 'GET', from), 403, 'SERVICE_NOT_ACTIVE');
        await send(base, '/v1/rates/usd_free', { 'x-api-key': spent }, 'GET', from);
        const limited = await send(base, testCase.path, { 'x-api-key': spent }, 'GET', from);
        assertEnvelope(limited, 429, 'RATE_LIMIT_EXCEEDED');
        assert.ok(Number(limited.headers['retry-after']) >= 1, 'Number(limited.headers[\'retry-after\']) >= 1');

        const refused = await send(base, testCase.path, { 'x-api-key': order.key }, 'GET', from);
        assertEnvelope(refused, 400, testCase.code);
        assert.equal(refused.headers['x-ratelimit-remaining'], '5999', 'the refusal is counted by the limiter');
        if (testCase.code === 'INVALID_PARAMETER') assert.match(JSON.parse(refused.body).message, /"foo"/);
        const head = await send(base, testCase.path, { 'x-api-key': order.key }, 'HEAD', from);
        assert.equal(head.status, 400);
        assert.equal(head.headers['x-ratelimit-remaining'], '5998');

        // Both refusals show in the account's usage, as errors.
        await harness.app.inject({ url: '/v1/usage', headers: { 'x-api-key': order.key } });
        assert.equal((await harness.store.usage.total(order.accountId)).errors, 2);
      });
    }
  });
});
