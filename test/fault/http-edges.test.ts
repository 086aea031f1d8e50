/**
 * The real `nerkh serve` process under hostile HTTP over bare TCP sockets:
 * slow headers, oversize headers and URLs, garbage bytes, unknown methods,
 * CONNECT, QUERY, control characters, raw non-ASCII bytes in the path, and a
 * few thousand seeded random requests. The process must never exit, never
 * answer 5xx but 503, and every error it writes must be the contract's
 * envelope with a request id and `cache-control: no-store`.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/env.js';
import { assertBuilt, get, pollUntil, startServer, type ServerProcess } from '../e2e/helpers.js';
import { contractViolations, exchange, type RawExchange } from './raw-http.js';
import { HANG_MS } from '../support/deadline.js';

const FUZZ_REQUESTS = 3000;
const FUZZ_CONCURRENCY = 16;
const SLOWLORIS_SOCKETS = 200;

/** A request line and headers, CRLF-terminated, closing the connection after the answer. */
function httpRequest(requestLine: string, headers: string[] = ['Host: 127.0.0.1']): string {
  return `${requestLine}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`;
}

describe('HTTP edges against the real process', { timeout: 240_000 }, () => {
  const dataDir = tempDir('nerkh-fault-http-data-');
  const cwd = tempDir('nerkh-fault-http-cwd-');
  let server: ServerProcess;
  let demoKey = '';
  const statuses = new Map<string, number>();
  let tried = 0;
  // The fuzzing below draws a new seed every run (npm test draws and prints one); NERKH_FUZZ_SEED replays a run.
  const seed = Number(process.env.NERKH_FUZZ_SEED || randomInt(1, 2 ** 31));
  const replay = `fuzz seed ${seed}: NERKH_FUZZ_SEED=${seed} replays it`;

  /** Send, check every answer against the contract, and count it. */
  async function tryRequest(bytes: Buffer | string, options: { head?: boolean; timeoutMs?: number } = {}): Promise<RawExchange> {
    tried++;
    const result = await exchange(server.port, bytes, { ...options, stopAfterResponse: true });
    for (const response of result.responses) {
      statuses.set(String(response.status), (statuses.get(String(response.status)) ?? 0) + 1);
      const problems = contractViolations(response, options.head ?? false);
      assert.deepEqual(problems, [], `request ${JSON.stringify(bytes.toString().slice(0, 200))} (${replay})`);
    }
    if (result.responses.length === 0) statuses.set('no answer', (statuses.get('no answer') ?? 0) + 1);
    return result;
  }

  async function refusal(bytes: Buffer | string, status: number, code: string): Promise<Record<string, string>> {
    const result = await tryRequest(bytes);
    assert.equal(result.responses.length, 1, `expected one answer, got ${result.responses.length} (rest: ${JSON.stringify(result.garbage.slice(0, 200))})`);
    const [response] = result.responses;
    assert.equal(response!.status, status, response!.body.toString());
    assert.equal(JSON.parse(response!.body.toString()).error, code);
    return response!.headers;
  }

  before(async () => {
    assertBuilt();
    // No config in the working folder: the built-in demo setup, whose key is printed once.
    server = await startServer({ NERKH_DATA_DIR: dataDir.path, NERKH_LOG_LEVEL: 'warn' }, { cwd: cwd.path });
    const { value } = await pollUntil(async () => server.stdout, (out) => /^\s*nrk_\S+\s*$/m.test(out), 5000, 50, (out) => out);
    demoKey = /^\s*(nrk_\S+)\s*$/m.exec(value)![1]!;
    await pollUntil(() => get(server.base, '/readyz'), (r) => r.status === 200, 10_000, 100, (r) => `HTTP ${r.status}`);
  });

  after(async () => {
    await server?.kill();
    dataDir.cleanup();
    cwd.cleanup();
  });

  it('sockets that send their headers slowly are all closed, and others are served meanwhile', async (t) => {
    const started = Date.now();
    const closedAt: number[] = [];
    const answered: string[] = [];
    const sockets: Socket[] = [];
    let connected = 0;
    let trickled = 0;
    const trickle = setInterval(() => {
      for (const socket of sockets) if (!socket.destroyed) socket.write(`X-Slow-${Math.floor(Math.random() * 1e6)}: a\r\n`);
      if (connected === SLOWLORIS_SOCKETS) trickled++;
    }, 1000);
    try {
      await Promise.all(
        Array.from(
          { length: SLOWLORIS_SOCKETS },
          (_, i) =>
            new Promise<void>((resolve) => {
              const socket = connect(server.port, '127.0.0.1', () => {
                connected++;
                socket.write(`GET /v1/rates/usd_free HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-Start: ${i}\r\n`);
              });
              sockets.push(socket);
              let text = '';
              socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
              socket.on('error', () => {});
              socket.on('close', () => {
                closedAt.push(Date.now() - started);
                answered.push(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 'none');
                resolve();
              });
            }),
        ).concat(
          (async () => {
            // The service goes on answering while the slow sockets hang on: every one of them connected and
            // trickling more headers (a round written after the last connected), not after a fixed 3 s.
            await pollUntil(async () => trickled, (n) => n >= 1, 10_000, 50, (n) => `${connected} of ${SLOWLORIS_SOCKETS} connected, ${n} rounds`);
            const during = await get(server.base, `/v1/rates/usd_free`, demoKey);
            assert.equal(during.status, 200);
          })(),
        ),
      );
    } finally {
      clearInterval(trickle);
      for (const socket of sockets) socket.destroy();
    }
    const last = Math.max(...closedAt);
    const answers = answered.reduce<Record<string, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});
    t.diagnostic(`${SLOWLORIS_SOCKETS} slow sockets: first closed at ${Math.min(...closedAt)} ms, last at ${last} ms; answers ${JSON.stringify(answers)}`);
    // The header timeout ends them (how soon is a bench figure); a socket held past any timeout fails here.
    assert.ok(last <= HANG_MS, `the last slow socket closed after ${last} ms`);
    assert.equal(answers['408'], SLOWLORIS_SOCKETS, 'each slow socket is told 408 before it is closed');
  });

  it('headers over 16 KB: 431 REQUEST_HEADERS_TOO_LARGE', async () => {
    await refusal(httpRequest('GET /healthz HTTP/1.1', ['Host: 127.0.0.1', `X-Big: ${'a'.repeat(20_000)}`]), 431, 'REQUEST_HEADERS_TOO_LARGE');
    await refusal(httpRequest('GET /v1/rates/usd_free HTTP/1.1', ['Host: 127.0.0.1', ...Array.from({ length: 400 }, (_, i) => `X-Many-${i}: ${'b'.repeat(40)}`)]), 431, 'REQUEST_HEADERS_TOO_LARGE');
  });

  it('a URL over 16 KB: 431 REQUEST_HEADERS_TOO_LARGE', async () => {
    await refusal(httpRequest(`GET /v1/rates/${'usd_free,'.repeat(2000)} HTTP/1.1`), 431, 'REQUEST_HEADERS_TOO_LARGE');
    await refusal(httpRequest(`GET /healthz?${'q'.repeat(17_000)} HTTP/1.1`), 431, 'REQUEST_HEADERS_TOO_LARGE');
  });

  it('garbage bytes: 400 BAD_REQUEST', async () => {
    await refusal(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]), 400, 'BAD_REQUEST');
    await refusal('\r\n\r\n\r\n hello there\r\n\r\n', 400, 'BAD_REQUEST');
    await refusal(httpRequest('GET /healthz HTTX/1.1'), 400, 'BAD_REQUEST');
  });

  it('unknown and refused methods, QUERY and CONNECT: 405 METHOD_NOT_ALLOWED with Allow', async () => {
    for (const method of ['FOO', 'QUERY', 'POST', 'PUT', 'DELETE', 'PATCH', 'TRACE', 'PROPFIND']) {
      const headers = await refusal(httpRequest(`${method} /v1/rates HTTP/1.1`, ['Host: 127.0.0.1', `x-api-key: ${demoKey}`]), 405, 'METHOD_NOT_ALLOWED');
      assert.equal(headers.allow, 'GET, HEAD, OPTIONS', method);
    }
    const connectAnswer = await refusal('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405, 'METHOD_NOT_ALLOWED');
    assert.equal(connectAnswer.allow, 'GET, HEAD, OPTIONS');
  });

  it('control characters in a header: 400 BAD_REQUEST', async () => {
    await refusal(httpRequest('GET /healthz HTTP/1.1', ['Host: 127.0.0.1', 'X-Bad: a\x01b']), 400, 'BAD_REQUEST');
    await refusal(httpRequest('GET /v1/rates/usd_free HTTP/1.1', ['Host: 127.0.0.1', `x-api-key: ${demoKey}\x7f`]), 400, 'BAD_REQUEST');
    await refusal(httpRequest('GET /healthz HTTP/1.1', ['Host: 127.0.0.1', 'X-Null: \x00']), 400, 'BAD_REQUEST');
  });

  it('raw non-ASCII bytes in the path: 400 BAD_REQUEST', async () => {
    const path = Buffer.concat([Buffer.from('GET /v1/rates/'), Buffer.from('سکه', 'utf8'), Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')]);
    await refusal(path, 400, 'BAD_REQUEST');
  });

  it('an HTTP/1.1 request without Host: 400 BAD_REQUEST (HTTP/1.0 needs none)', async () => {
    await refusal(httpRequest('GET /healthz HTTP/1.1', []), 400, 'BAD_REQUEST');
    await refusal(httpRequest('GET /v1/rates/usd_free HTTP/1.1', [`x-api-key: ${demoKey}`]), 400, 'BAD_REQUEST');
    const old = await tryRequest(httpRequest('GET /v1/rates/usd_free HTTP/1.0', [`x-api-key: ${demoKey}`]));
    assert.equal(old.responses[0]?.status, 200);
  });

  it('a few thousand seeded random requests: no 5xx but 503, every error in the envelope', { timeout: 180_000 }, async (t) => {
    t.diagnostic(replay);
    const random = mulberry32(seed);
    const fuzzStatuses = new Map<string, number>();
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < FUZZ_REQUESTS) {
        next++;
        const { bytes, head } = fuzzedRequest(random, demoKey);
        const result = await tryRequest(bytes, { head, timeoutMs: 15_000 });
        const label = result.responses.length === 0 ? 'no answer' : String(result.responses.at(-1)!.status);
        fuzzStatuses.set(label, (fuzzStatuses.get(label) ?? 0) + 1);
        if (result.responses.length === 0) assert.fail(`no answer to ${JSON.stringify(bytes.toString('latin1').slice(0, 300))} (closed by server: ${result.closedByServer}; ${replay})`);
      }
    };
    await Promise.all(Array.from({ length: FUZZ_CONCURRENCY }, worker));
    const summary = [...fuzzStatuses].sort(([a], [b]) => a.localeCompare(b)).map(([status, count]) => `${status}: ${count}`).join(', ');
    t.diagnostic(`seed ${seed}: ${FUZZ_REQUESTS} fuzzed requests in ${Date.now() - started} ms; statuses ${summary}`);
    assert.ok(server.running, `the server exited (${replay}): ${JSON.stringify(server.exit)}\n${server.output()}`);
  });

  it('the process is still up and serving, and wrote no crash', async (t) => {
    assert.ok(server.running, `the server exited: ${JSON.stringify(server.exit)}\n${server.output()}`);
    assert.equal((await get(server.base, '/healthz')).status, 200);
    assert.equal((await get(server.base, '/v1/rates/usd_free', demoKey)).status, 200);
    assert.doesNotMatch(server.stderr, /Uncaught|FATAL|at .*\.js:\d+/, server.output());
    const summary = [...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([status, count]) => `${status}: ${count}`).join(', ');
    t.diagnostic(`${tried} requests tried in all; statuses ${summary}`);
    const fiveHundreds = [...statuses].filter(([status]) => status.startsWith('5') && status !== '503');
    assert.deepEqual(fiveHundreds, [], replay);
  });
});

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with its seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random request, complete on the wire (so an answer is always due), mostly HTTP-shaped, sometimes not. */
function fuzzedRequest(random: () => number, demoKey: string): { bytes: Buffer; head: boolean } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chance = (p: number) => random() < p;
  const token = (length: number, alphabet: string) => Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
  const bytesOf = (length: number) => Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));

  if (chance(0.04)) return { bytes: Buffer.concat([bytesOf(1 + Math.floor(random() * 200)), Buffer.from('\r\n\r\n')]), head: false };

  const method = chance(0.5) ? 'GET' : pick(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH', 'QUERY', 'TRACE', 'FOO', 'get', 'M-SEARCH', 'PROPFIND', token(1 + Math.floor(random() * 12), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ-_'), token(3, '!#$%&*+.^|~<>@')]);
  const keys = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pick(['usd_free', 'coin_emami', 'gold_18k', 'sekkeh', 'nope', 'USD_FREE', ' usd_free', '', token(5 + Math.floor(random() * 80), 'abcxyz_.-09')])).join(',');
  const target = pick([
    `/v1/rates/${keys}`,
    `/v1/rates/${keys}`,
    `/v1/rates/${keys}?${pick(['', 'foo=1', 'unit=toman', 'a=%zz', '&&', 'x'])}`,
    `/v1/rates/${encodeURIComponent(keys)}`,
    `/v1/rates/%${token(2, '0123456789ABCDEFGZ%')}${token(3, 'abc%')}`,
    `/v1/rates/${'k,'.repeat(Math.floor(random() * 1500))}z`,
    '/v1/rates',
    `/v1/rates?category=${pick(['gold', 'coin', 'nonsense', '', 'gold&category=coin'])}&q=${token(4, 'abc%')}`,
    `/v1/usage?days=${pick(['7', '0', '91', 'abc', '1.5', '-1'])}`,
    '/v1/status',
    `/webservice/${pick(['demo', 'someone', '%E0%A4%A', '..', ''])}`,
    '/healthz',
    `/healthz?${token(3, 'abc=&')}`,
    '/readyz',
    '/metrics',
    '/status',
    '/openapi.json',
    '/docs/',
    '/',
    '*',
    'http://127.0.0.1/healthz',
    `/${token(Math.floor(random() * 40), 'abc/%.?#;=&+')}`,
    `//${token(5, 'abc/.')}`,
    `/v1/../../etc/passwd`,
  ]);
  const version = chance(0.85) ? 'HTTP/1.1' : pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'HTTX/1.1', 'http/1.1', 'HTTP/1.1 extra']);
  const headers: string[] = [];
  if (chance(0.95)) headers.push('Host: 127.0.0.1');
  const key = pick(['none', 'demo', 'demo', 'random', 'garbage']);
  if (key === 'demo') headers.push(`x-api-key: ${demoKey}`);
  if (key === 'random') headers.push(`x-api-key: nrk_${token(32, 'abcXYZ0189')}`);
  if (key === 'garbage') headers.push(`x-api-key: ${token(Math.floor(random() * 60), "abc'\";-- ")}`);
  if (chance(0.2)) headers.push(`x-request-id: ${pick(['board-7', 'a b<script>', token(200, 'abc'), ''])}`);
  if (chance(0.1)) headers.push(`Origin: https://${token(6, 'abc')}.example`);
  if (chance(0.1)) headers.push(`If-None-Match: "${token(8, 'abc0189')}"`);
  if (chance(0.05)) headers.push(`${token(1 + Math.floor(random() * 10), 'abc-_')}: ${token(10, 'abc \t')}`);
  if (chance(0.03)) headers.push(`X-Ctl: a${String.fromCharCode(Math.floor(random() * 32))}b`);
  if (chance(0.03)) headers.push(`Bad Header Name: x`);
  if (chance(0.02)) headers.push('Expect: 100-continue');
  if (chance(0.02)) headers.push(`Expect: ${token(6, 'abc')}`);
  if (chance(0.02)) headers.push(`X-Big: ${'z'.repeat(17_000)}`);
  let body = '';
  const bodyKind = chance(0.8) ? 'none' : pick(['length', 'chunked', 'both', 'bad-length']);
  if (bodyKind === 'length') {
    body = token(Math.floor(random() * 64), 'abc{}":');
    headers.push(`Content-Length: ${body.length}`, `Content-Type: ${pick(['application/json', 'text/plain', 'nonsense'])}`);
  } else if (bodyKind === 'chunked') {
    headers.push('Transfer-Encoding: chunked');
    body = '3\r\nabc\r\n0\r\n\r\n';
  } else if (bodyKind === 'both') {
    headers.push('Content-Length: 3', 'Transfer-Encoding: chunked');
    body = '0\r\n\r\n';
  } else if (bodyKind === 'bad-length') {
    headers.push(`Content-Length: ${pick(['-1', 'abc', '1, 2', '99999999999999999999'])}`);
  }
  const eol = chance(0.97) ? '\r\n' : pick(['\n', '\r']);
  const text = `${method} ${target} ${version}${eol}${[...headers, 'Connection: close'].join(eol)}${eol}${eol}${body}`;
  return { bytes: Buffer.from(text, 'latin1'), head: method === 'HEAD' };
}
