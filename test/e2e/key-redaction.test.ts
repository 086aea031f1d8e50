/**
 * No key is ever written down: a real `nerkh serve` process at
 * log level info gets keys in every spelling it accepts (the x-api-key header
 * in any case; `?api_key=` on the stream with its name or value
 * percent-encoded, padded, or behind `#`), in spellings it does not accept
 * but a client may still send (`API_KEY`, `apikey`, repeated, on endpoints
 * that take no key in the query), and key-shaped values anywhere in the
 * address (a path segment, another parameter). Every kind of answer is
 * provoked on every keyed path: success, 400, 401, 403, 404, 405 and both
 * 429s, on the raw detail path, the Fastify routes, history, `?at=`, the
 * stream, usage, the drop-in routes (`?api_key=`, `?key=`) and the pages.
 * Then the key must appear nowhere: not in the process's output (its log),
 * not in any account's usage error log (as `/v1/usage` shows it), not in
 * `/metrics`, not in any file of the store.
 * The same process runs with NERKH_METRICS_TOKEN and NERKH_FRAME_ANCESTORS
 * set, so the environment's way to /metrics and to the pages' policy is
 * held here too (and the metrics token is a secret the log must not hold).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { tempDir, writeSource } from '../support/env.js';
import { assertBuilt, catalogueSourceKeys, cliJson, cliOk, cliOkEach, filesContaining, pollUntil, startServer, type ServerProcess } from './access-helpers.js';

interface Answer {
  status: number;
  type: string;
  text: string;
}

interface Sent {
  path: string;
  key?: string;
  /** Other headers, as sent. */
  headers?: Record<string, string>;
  origin?: string;
  method?: string;
  /** The loopback address to send from (the failed-key throttle counts per address). */
  from?: string;
}

/** Every `%XX` decoded, repeatedly: what a reader of the log could turn back into a key. */
function decodeLoosely(text: string): string {
  let out = text.replace(/\+/g, ' ');
  for (let i = 0; i < 3 && out.includes('%'); i++) out = out.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return out;
}

/** Every character of `text` percent-encoded, letters and digits included. */
const encodeAll = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');

describe('no key in the log, the usage error log, the metrics or the store (a real server at log level info)', { timeout: 120_000 }, () => {
  const tmp = tempDir('nerkh-e2e-redaction-');
  const dataDir = join(tmp.path, 'data');
  const sourcePath = join(tmp.path, 'sources', 'alpha.json');
  const configPath = join(tmp.path, 'nerkh.config.json');
  const baseEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NERKH_') && name !== 'NODE_TEST_CONTEXT'));
  const metricsToken = 'scrape-Zq81Lr5XvB0pWc3N';
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    NERKH_HOST: '127.0.0.1',
    NERKH_DATA_DIR: dataDir,
    NERKH_CONFIG: configPath,
    NERKH_LOG_LEVEL: 'info',
    NERKH_METRICS_TOKEN: metricsToken,
    NERKH_FRAME_ANCESTORS: 'https://shop.example',
  };
  const keys: Record<string, string> = {};
  /** A well-formed key no account holds: it is a secret all the same. */
  const unknown = `nrk_${'Q7'.repeat(16)}`;
  let server: ServerProcess;
  const answers: { sent: Sent; answer: Answer }[] = [];

  /** One request over real HTTP with the path exactly as given (no client-side normalising); a stream's first bytes are its answer. */
  function send(sent: Sent): Promise<Answer> {
    const { hostname, port } = new URL(server.base);
    const headers: Record<string, string> = { ...sent.headers };
    if (sent.key) headers['X-Api-Key'] = sent.key;
    if (sent.origin) headers.origin = sent.origin;
    return new Promise((resolve, reject) => {
      const outgoing = request({ host: hostname, port, path: sent.path, method: sent.method ?? 'GET', headers, localAddress: sent.from ?? '127.0.0.1', timeout: 5000 }, (response) => {
        let text = '';
        const type = String(response.headers['content-type'] ?? '');
        const done = () => resolve({ status: response.statusCode!, type, text });
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
          if (type.startsWith('text/event-stream')) {
            done();
            outgoing.destroy();
          }
        });
        response.on('end', done);
      });
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer to ${sent.path} within 5 s`)));
      outgoing.on('error', reject).end();
    }).then((answer) => {
      answers.push({ sent, answer: answer as Answer });
      return answer as Answer;
    });
  }

  /** The secret part of every key: what must not appear anywhere, in any encoding. */
  const secrets = () => [...[...Object.values(keys), unknown].map((key) => key.slice('nrk_'.length)), metricsToken];
  const leaks = (text: string, where: string) => {
    const decoded = decodeLoosely(text);
    const found = secrets().filter((secret) => text.includes(secret) || decoded.includes(secret));
    assert.deepEqual(found, [], `a key appears in ${where}`);
  };

  before(async () => {
    assertBuilt();
    mkdirSync(join(tmp.path, 'sources'), { recursive: true });
    const sourceKeys = catalogueSourceKeys();
    writeSource(sourcePath, { [sourceKeys.get('usd_free')!]: 1_030_000, [sourceKeys.get('coin_emami')!]: 880_000_000 });
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 300, poll_seconds: 0.5 }],
        plans: { tiny: { services: ['catalogue', 'detail', 'usage', 'history', 'stream', 'status', 'webservice'], requests_per_minute: 3 } },
      }),
    );
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    const accounts: [string, string][] = [
      ['main', 'enterprise'],
      ['tiny', 'tiny'],
      ['shop', 'enterprise'],
      ['basic', 'basic'],
    ];
    await cliOkEach(env, accounts.map(([username, plan]) => ['accounts', 'add', username, '--plan', plan]));
    await cliOk(env, ['accounts', 'set', 'shop', '--origins', 'https://shop.example']);
    for (const [username] of accounts) keys[username] = (await cliJson<{ key: string }>(env, ['keys', 'issue', username])).key;
    server = await startServer(env, 0);
  });

  after(() => {
    server?.kill();
    tmp.cleanup();
  });

  it('the server reads the key from every spelling it accepts (so the rest of this suite sends real keys)', async () => {
    const key = keys.main!;
    const tail = key.slice('nrk_'.length);
    const accepted = [
      `/v1/stream?keys=usd_free&api_key=${key}`,
      `/v1/stream?keys=usd_free&api%5Fkey=${key}`,
      `/v1/stream?keys=usd_free&api%5fkey=${key}`,
      `/v1/stream?keys=usd_free&%61%70%69%5F%6B%65%79=${key}`,
      `/v1/stream?keys=usd_free&api_key=nrk%5F${tail}`,
      `/v1/stream?keys=usd_free&api_key=${encodeAll(key)}`,
      `/v1/stream?keys=usd_free&api_key=+${key}+`,
      `/v1/stream?keys=usd_free&api_key=%20${key}%09`,
      `/v1/stream#api_key=${key}`,
    ];
    for (const path of accepted) {
      const answer = await send({ path });
      assert.equal(answer.status, 200, `${path}: ${answer.text.slice(0, 200)}`);
      assert.match(answer.type, /^text\/event-stream/, path);
    }
    const header = await send({ path: '/v1/rates/usd_free', key });
    assert.equal(header.status, 200, header.text);
  });

  it('keys in the address, in every answer on every keyed path, leave no trace', async () => {
    const key = keys.main!;
    const tail = key.slice('nrk_'.length);
    // Spellings the server does not read as a key, still secrets when they hold one.
    const spellings = [`api_key=${key}`, `API_KEY=${key}`, `Api_Key=${key}`, `api-key=${key}`, `apikey=${key}`, `x-api-key=${key}`, `api+key=${key}`, `api_key=${key}&api_key=${key}`, `key=${key}`, `api_key=${key}%ZZ`];
    for (const query of spellings) {
      await send({ path: `/v1/stream?${query}` }); // no header: 401 (or the failed-key throttle's 429)
      await send({ path: `/v1/rates/usd_free?${query}`, key }); // raw detail path: 400 after admission, metered
      await send({ path: `/v1/rates/usd_free?${query}` }); // raw detail path: 401
      await send({ path: `/v1/rates?${query}`, key }); // raw catalogue path: 400
      await send({ path: `/v1/rates/%75sd_free?${query}`, key }); // Fastify's detail route: 400
      await send({ path: `/v1/rates/usd_free?at=2024-01-01T00:00:00Z&${query}`, key }); // history at a moment: 400
      await send({ path: `/v1/rates/usd_free/history?interval=1h&${query}`, key });
      await send({ path: `/v1/usage?${query}`, key });
      await send({ path: `/v1/status?${query}`, key });
      await send({ path: `/webservice/main?${query}`, key });
      await send({ path: `/v1/stream?keys=usd_free&unit=nope&${query}`, key });
      // The drop-in routes read navasan's `api_key` and BrsApi's `key` (200 when that is the spelling), in each of their spellings.
      await send({ path: `/compat/navasan/latest/?item=usd&${query}` });
      await send({ path: `/compat/navasan/latest?${query}&item=USD` });
      await send({ path: `/compat/navasan/ohlcSearch/?${query}`, key }); // 400: no item
      await send({ path: `/compat/navasan/usage/?${query}` });
      await send({ path: `/compat/brsapi/Api/Market/Gold_Currency.php?${query}` });
      await send({ path: `/compat/brsapi/Market/Gold_Currency.php?${query}`, key });
    }
    // Key-shaped values elsewhere in the address.
    for (const path of [
      `/v1/rates/${key}`,
      `/v1/rates/usd_free,${key}`,
      `/v1/rates/%6Erk_${tail}`,
      `/v1/rates?q=${key}`,
      `/v1/rates/usd_free/history?interval=1h&from=${key}`,
      `/v1/usage?days=${key}`,
      `/v1/stream?keys=${key}`,
      `/v1/stream?keys=no_such_rate&api_key=${key}`,
      `/v1/stream?keys=bad!key&api_key=${key}`,
      `/v1/nothing/${key}?api_key=${key}`,
      `/${key}`,
    ]) {
      await send({ path, key });
    }
    // A key where a request id goes (a sane-looking id is echoed and logged).
    await send({ path: '/v1/rates/usd_free', key, headers: { 'x-request-id': key } });
    await send({ path: '/v1/usage', key, headers: { 'x-request-id': `trace:${key}` } });
    // 405, and the pages (a page may be asked for with a key in its address).
    await send({ path: `/v1/rates/usd_free?api_key=${key}`, key, method: 'POST' });
    for (const page of ['/', '/account', '/board', '/status', '/docs/', '/metrics', '/openapi.json', '/healthz']) await send({ path: `${page}?api_key=${key}&keys=usd_free` });

    // 403: a plan without the stream, an origin outside the allow-list.
    assert.equal((await send({ path: `/v1/stream?api_key=${keys.basic}` })).status, 403);
    assert.equal((await send({ path: `/v1/rates/usd_free?api_key=${keys.shop}`, key: keys.shop, origin: 'https://elsewhere.example' })).status, 403);
    assert.equal((await send({ path: `/v1/stream?api_key=${keys.shop}`, origin: 'https://elsewhere.example' })).status, 403);
    // 429: a spent limit (three a minute), on the raw path and the stream.
    for (let i = 0; i < 4; i++) await send({ path: `/v1/rates/usd_free?api_key=${keys.tiny}`, key: keys.tiny });
    const spent = await send({ path: `/v1/stream?keys=usd_free&api_key=${keys.tiny}` });
    assert.equal(spent.status, 429, spent.text);
    // 429: an address that keeps sending a key no account holds.
    let throttled: Answer | null = null;
    for (let i = 0; i < 35; i++) throttled = await send({ path: `/v1/rates/usd_free?api_key=${unknown}`, key: unknown, from: '127.0.0.2' });
    assert.equal(throttled!.status, 429, throttled!.text);
    const statuses = new Set(answers.map(({ answer }) => answer.status));
    for (const status of [200, 400, 401, 403, 404, 405, 429]) assert.ok(statuses.has(status), `some answer was ${status}`);
  });

  it('the usage error log of every account holds the failures, with the key redacted', async () => {
    // As the account sees it (tiny's limit is spent, so only the operator's view for it)...
    for (const username of ['main', 'shop', 'basic']) {
      const usage = await send({ path: '/v1/usage?days=1', key: keys[username] });
      assert.equal(usage.status, 200, usage.text);
      leaks(usage.text, `${username}'s usage error log`);
    }
    // ...and as the operator's command reads it from the store, once the meter has written it (twice a second).
    for (const username of ['main', 'tiny', 'shop', 'basic']) {
      const { value: usage } = await pollUntil(() => cliJson<{ errors: { path: string }[] }>(env, ['usage', username, '--days', '1']), (read) => read.errors.length > 0, 5000, 100, (read) => JSON.stringify(read).slice(0, 300));
      assert.ok(usage.errors.length > 0, `${username} has errors logged`);
      leaks(JSON.stringify(usage), `${username}'s usage error log (nerkh usage)`);
    }
    const main = (JSON.parse((await send({ path: '/v1/usage?days=1', key: keys.main })).text) as { errors: { path: string }[] }).errors;
    assert.ok(
      main.some((entry) => entry.path.includes('[redacted]')),
      `the log keeps the path, with the key replaced: ${JSON.stringify(main.slice(0, 5))}`,
    );
  });

  it("the pages' policy names who may frame them, as NERKH_FRAME_ANCESTORS says", async () => {
    const { hostname, port } = new URL(server.base);
    const policy = await new Promise<string>((resolve, reject) => {
      request({ host: hostname, port, path: '/board' }, (response) => {
        response.resume();
        resolve(String(response.headers['content-security-policy']));
      })
        .on('error', reject)
        .end();
    });
    assert.match(policy, /(^|; )frame-ancestors https:\/\/shop\.example$/);
  });

  it('/metrics holds route templates, never an address as sent', async () => {
    assert.equal((await send({ path: '/metrics' })).status, 401, 'NERKH_METRICS_TOKEN asks for the token');
    const metrics = await send({ path: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /route="\/v1\/rates\/:keys"/);
    leaks(metrics.text, '/metrics');
  });

  it('the log accounts for each request (refusals of one key, status and second folded into one line with their count), and none holds a key; nor does any file of the store', async () => {
    const stopped = await server.stop();
    assert.equal(stopped.code, 0);
    const output = server.stdout() + server.stderr();
    const lines = output.split('\n').filter((line) => line.includes('"msg":"request"') || line.includes('"msg":"stream opened"'));
    const folded = output
      .split('\n')
      .filter((line) => line.includes('"refused":'))
      .reduce((sum, line) => sum + Number((JSON.parse(line) as { refused: number }).refused), 0);
    assert.ok(lines.length + folded >= answers.length - 5, `a log line or a folded count per request (${lines.length} lines and ${folded} folded for ${answers.length} requests)`);
    assert.ok(
      lines.some((line) => line.includes('[redacted]')),
      'logged addresses keep their shape, the key replaced',
    );
    leaks(output, "the server's output");
    const stored = filesContaining(dataDir, [...secrets(), ...secrets().map(encodeAll)]);
    assert.deepEqual(stored, [], 'a key in the store');
  });
});
