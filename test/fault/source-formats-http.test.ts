/**
 * The ECB and CSV formats over HTTP, read by the real `nerkh serve` process
 * from a real node:http server on 127.0.0.1: an `http` source with
 * `format: "ecb"` polling a document in the shape of the ECB's
 * eurofxref-daily.xml, and one with `format: "csv"` polling a CSV file.
 * Each value is served to the digit: rates per euro as written, crosses
 * computed exactly and rounded half to even at 6 decimals (ties both ways),
 * integers past 2^53 and decimals with their trailing zeros. A broken
 * document (truncated XML, an HTTP 503, an unclosed CSV quote) never
 * replaces the last good values; a good one does.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/fault/source-formats-http.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from '../e2e/helpers.js';
import { catalogueWithoutTops, ecbXml, persian } from './format-fixtures.js';

interface SourceStatus {
  name: string;
  state: string;
  error: string | null;
  format: string;
  mapped: number;
  dropped: number;
}
interface Rate {
  key: string;
  status: string;
  source: string | null;
}

/** A document the fixture server answers with: a status, a content type and a body. */
interface Answer {
  status: number;
  type: string;
  body: string;
}

/** The cross `top ÷ bottom` as the docs define it, worked by hand: big.js to 40 places, then half to even at 6. */
function crossByHand(top: string, bottom: string): string {
  const Precise = Big();
  Precise.DP = 40;
  return new Precise(top).div(bottom).round(6, Big.roundHalfEven).toFixed();
}

describe('source formats over HTTP: ecb and csv polled by a real nerkh serve', () => {
  const dir = tempDir('nerkh-formats-http-');
  // A weekday two days back: the reference date is well past its publication whatever the hour here.
  const ecbDate = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  /**
   * With USD at 1.0240 per euro (2^10 / 1000), yen 160.04 and lira 40.12 per
   * euro give crosses that end exactly on a 5 in the 7th decimal:
   * 156.2890625 (to the even 156.289062, down) and 39.1796875 (to the even
   * 39.179688, up); half-up or truncation would each get one of them wrong.
   */
  const ecbRates = { USD: '1.0240', JPY: '160.04', TRY: '40.12', GBP: '0.8512', IRR: '9007199254740993' };
  const csvText = (bahar: string, updated = Math.floor(Date.now() / 1000) - 30) =>
    'source_key,value,updated_at\n' +
    `ir_coin_bahar,"${bahar}",${updated}\n` +
    `ir_coin_emami,9007199254740993,${updated}\n` +
    `intl_xag_usd_spot,50.250,${new Date((updated - 5) * 1000).toISOString()}\n` +
    `intl_crude_brent,${persian('65')}٫${persian('250')},${updated}\n`;

  const documents: Record<string, Answer> = {
    '/stats/eurofxref/eurofxref-daily.xml': { status: 200, type: 'text/xml', body: ecbXml(ecbDate, ecbRates) },
    '/desk/prices.csv': { status: 200, type: 'text/csv; charset=utf-8', body: csvText('9,007,199,254,740,995') },
  };
  const accepts = new Map<string, string | undefined>();
  let upstream: Server | null = null;
  let server: ServerProcess | null = null;
  let apiKey = '';

  const keysPath = '/v1/rates/fx_eurusd,fx_eurjpy,fx_usdjpy,fx_usdtry,fx_gbpusd,eur_free,coin_bahar,coin_emami,silver_ounce,oil_brent';
  const detail = async () => {
    const response = await get(server!.base, keysPath, apiKey);
    assert.equal(response.status, 200, response.text.slice(0, 300));
    return response;
  };
  const sources = async () => {
    const response = await get(server!.base, '/v1/status', apiKey);
    assert.equal(response.status, 200, response.text.slice(0, 300));
    return new Map((response.json as { sources: SourceStatus[] }).sources.map((s) => [s.name, s]));
  };
  /** Each rate's value exactly as the body writes it (JSON.parse would round a value past 2^53). */
  const rawValues = (body: string) => Object.fromEntries([...body.matchAll(/"key":"([a-z0-9_]+)"[^{}]*?"value":([^,]+),/g)].map((m) => [m[1]!, m[2]!]));

  const expected: Record<string, string> = {
    fx_eurusd: '1.0240',
    fx_eurjpy: '160.04',
    fx_usdjpy: '156.289062',
    fx_usdtry: '39.179688',
    fx_gbpusd: crossByHand('1.0240', '0.8512'),
    eur_free: '9007199254740993',
    coin_bahar: '9007199254740995',
    coin_emami: '9007199254740993',
    silver_ounce: '50.250',
    oil_brent: '65.250',
  };
  const from: Record<string, string> = {
    fx_eurusd: 'ecb',
    fx_eurjpy: 'ecb',
    fx_usdjpy: 'ecb',
    fx_usdtry: 'ecb',
    fx_gbpusd: 'ecb',
    eur_free: 'ecb',
    coin_bahar: 'desk-csv',
    coin_emami: 'desk-csv',
    silver_ounce: 'desk-csv',
    oil_brent: 'desk-csv',
  };

  /** Requests each path of the upstream got: a source read again is the event "it still holds" is checked after. */
  const asked = new Map<string, number>();
  const askedAgain = async (paths: string[]) => {
    const seen = paths.map((path) => asked.get(path) ?? 0);
    await pollUntil(async () => paths.map((path) => asked.get(path) ?? 0), (now) => now.every((n, i) => n > seen[i]!), 5000, 20, (now) => JSON.stringify(now));
  };

  before(async () => {
    assertBuilt();
    upstream = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0]!;
      accepts.set(path, request.headers.accept);
      asked.set(path, (asked.get(path) ?? 0) + 1);
      const answer = documents[path];
      if (!answer) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(answer.status, { 'content-type': answer.type });
      response.end(answer.body);
    });
    await new Promise<void>((resolve) => upstream!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        catalogue: catalogueWithoutTops(join(dir.path, 'catalogue'), ['eur_free', 'coin_bahar', 'coin_emami']),
        sources: [
          {
            name: 'ecb',
            type: 'http',
            url: `${base}/stats/eurofxref/eurofxref-daily.xml`,
            format: 'ecb',
            poll_seconds: 0.5,
            max_backoff_seconds: 1,
            // A reference date is a day old by the next one, and three over a weekend.
            max_age_seconds: 5 * 86_400,
            items: { intl_fx_eurusd: 'USD', intl_fx_eurjpy: 'JPY', intl_fx_usdjpy: 'JPY/USD', intl_fx_usdtry: 'TRY/USD', intl_fx_gbpusd: 'USD/GBP', ir_fx_free_eur: 'IRR' },
          },
          { name: 'desk-csv', type: 'http', url: `${base}/desk/prices.csv`, format: 'csv', poll_seconds: 0.5, max_backoff_seconds: 1, max_age_seconds: 600 },
        ],
      }),
    );
    const env = { NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'warn' };
    server = await startServer(env);
    await cliOk(cleanEnv(env), ['accounts', 'add', 'formats-http', '--plan', 'enterprise']);
    apiKey = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', 'formats-http', '--json'])).stdout) as { key: string }).key;
  });

  after(async () => {
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (formats over http) stderr:\n${server.stderr.slice(-3000)}`);
    }
    await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
    dir.cleanup();
  });

  it('serves every value to the digit: rates per euro as written, exact half-even crosses, integers past 2^53, decimals', async () => {
    // The crosses worked by hand agree with the ties described above.
    assert.deepEqual([crossByHand('160.04', '1.0240'), crossByHand('40.12', '1.0240')], ['156.289062', '39.179688']);
    const { value: response } = await pollUntil(
      () => detail(),
      (r) => Object.entries(expected).every(([key, value]) => rawValues(r.text)[key] === value),
      15_000,
      200,
      (r) => JSON.stringify(rawValues(r.text)),
    );
    for (const rate of (response.json as { rates: Rate[] }).rates) assert.deepEqual([rate.key, rate.status, rate.source], [rate.key, 'ok', from[rate.key]]);
    const all = await sources();
    assert.deepEqual(
      ['ecb', 'desk-csv'].map((name) => [name, all.get(name)!.state, all.get(name)!.format, all.get(name)!.mapped, all.get(name)!.dropped]),
      [
        ['ecb', 'active', 'ecb', 6, 0],
        ['desk-csv', 'active', 'csv', 4, 0],
      ],
    );
    // Each source asked for its own format.
    assert.equal(accepts.get('/stats/eurofxref/eurofxref-daily.xml'), 'application/xml, text/xml;q=0.9');
    assert.equal(accepts.get('/desk/prices.csv'), 'text/csv, text/plain;q=0.9');
  });

  it('keeps serving the last good values (stale, same digits, same source) through a truncated XML, an HTTP 503 and an unclosed CSV quote, then takes a good document', async () => {
    const good = rawValues((await detail()).text);
    documents['/stats/eurofxref/eurofxref-daily.xml'] = { status: 200, type: 'text/xml', body: ecbXml(ecbDate, { ...ecbRates, USD: '9.9999' }).slice(0, 400) };
    documents['/desk/prices.csv'] = { status: 200, type: 'text/csv', body: 'source_key,value\nir_coin_bahar,"1\nir_coin_emami,1\n' };
    const broken = await pollUntil(sources, (all) => ['ecb', 'desk-csv'].every((name) => all.get(name)!.state === 'degraded'), 10_000, 200, (all) => JSON.stringify([...all.values()].map((s) => [s.name, s.state, s.error])));
    assert.match(broken.value.get('ecb')!.error!, /^invalid XML \(line \d+\)$/);
    assert.match(broken.value.get('desk-csv')!.error!, /^invalid CSV \(CSV_QUOTE_NOT_CLOSED, line \d\)$/);
    // A failed read is skipped for fresh values at once: with no other source, the kept values are served stale, to the digit, from the same source.
    const holds = async () => {
      await pollUntil(detail, (r) => (r.json as { rates: Rate[] }).rates.every((rate) => rate.status === 'stale'), 5000, 100, (r) => r.text.slice(0, 600));
      // And still so after each source has read its bad document again (twice).
      for (let i = 0; i < 3; i++) {
        if (i > 0) await askedAgain(['/stats/eurofxref/eurofxref-daily.xml', '/desk/prices.csv']);
        const response = await detail();
        assert.deepEqual(rawValues(response.text), good);
        for (const rate of (response.json as { rates: Rate[] }).rates) assert.deepEqual([rate.key, rate.status, rate.source], [rate.key, 'stale', from[rate.key]]);
      }
    };
    await holds();

    documents['/stats/eurofxref/eurofxref-daily.xml'] = { status: 503, type: 'text/html', body: '<html><body>Service Unavailable</body></html>' };
    await pollUntil(sources, (all) => all.get('ecb')!.error === 'HTTP 503', 10_000, 200, (all) => JSON.stringify(all.get('ecb')));
    await holds();

    // A new reference date: USD at 1.2500 per euro, so yen 160.04 gives 128.032 exactly.
    documents['/stats/eurofxref/eurofxref-daily.xml'] = { status: 200, type: 'text/xml', body: ecbXml(ecbDate, { ...ecbRates, USD: '1.2500' }) };
    documents['/desk/prices.csv'] = { status: 200, type: 'text/csv', body: csvText('9,007,199,254,740,997') };
    await pollUntil(sources, (all) => ['ecb', 'desk-csv'].every((name) => all.get(name)!.state === 'active'), 10_000, 200);
    const { value: recovered } = await pollUntil(
      () => detail(),
      (r) => rawValues(r.text).fx_eurusd === '1.2500' && rawValues(r.text).coin_bahar === '9007199254740997' && (r.json as { rates: Rate[] }).rates.every((rate) => rate.status === 'ok'),
      10_000,
      200,
      (r) => JSON.stringify(rawValues(r.text)),
    );
    const now = rawValues(recovered.text);
    assert.deepEqual(
      [now.fx_usdjpy, now.fx_usdtry, now.fx_gbpusd, now.eur_free, now.coin_emami],
      ['128.032', crossByHand('40.12', '1.25'), crossByHand('1.25', '0.8512'), '9007199254740993', '9007199254740993'],
    );
    assert.ok(server!.running, server!.output());
  });
});
