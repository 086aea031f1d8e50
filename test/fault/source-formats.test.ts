/**
 * Sources in the shapes people already have, read by the real `nerkh serve`
 * process: a JSON feed over HTTP priced in toman with Persian digits and a
 * symbol-filtered array (`format: "mapping"`), a file in the shape of the
 * ECB's eurofxref-daily.xml (`format: "ecb"`) and a CSV file
 * (`format: "csv"`). Each serves its values to the digit (an integer above
 * 2^53 and a decimal with its trailing zero), drops what does not read with
 * its reason on /v1/status, `expand=sources` and the public page (fixed
 * phrases there, never the feed's text), and keeps its last good values
 * through a broken document until a good one comes back. A config with a bad
 * mapping stops the start, naming the source and the item.
 *
 * The fixtures follow the public documentation of each format and are made
 * here; nothing is fetched from outside.
 *
 * Needs `npm run build` first (bin/nerkh.js imports dist/); `npm test` does it.
 * Run alone: node --import tsx --test test/fault/source-formats.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import { ZoneTime } from '../../src/domain/time.js';
import { tempDir, writeRaw } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, freePort, get, pollUntil, runCli, startServer, type ServerProcess } from '../e2e/helpers.js';
import { catalogueWithoutTops, ecbXml, persian } from './format-fixtures.js';

interface DropCount {
  reason: string;
  description: string;
  count: number;
  source_keys: string[];
}
interface SourceStatus {
  name: string;
  state: string;
  last_update: string | null;
  error: string | null;
  format: string;
  mapped: number;
  dropped: number;
  dropped_reasons: DropCount[];
  unknown_keys: { count: number; sample: string[] };
}
interface SourceView {
  name: string;
  value: number | null;
  rejected: string | null;
  dropped_reason: string | null;
}
interface Rate {
  key: string;
  status: string;
  source: string | null;
  sources?: SourceView[];
}

/** References whose sanity band loses its top here, so an integer past 2^53 may be served. */
const UNBOUNDED = ['coin_emami', 'eur_free', 'coin_bahar'];

describe('source formats: mapping over HTTP, ecb and csv files, from a real nerkh serve', () => {
  const dir = tempDir('nerkh-formats-');
  const tehran = new ZoneTime('Asia/Tehran');
  const ecbPath = join(dir.path, 'eurofxref-daily.xml');
  const csvPath = join(dir.path, 'desk.csv');
  let feedBody = '';
  const feedRequests: { accept: string | undefined }[] = [];
  let feed: Server | null = null;
  let server: ServerProcess | null = null;
  let apiKey = '';

  /**
   * The toman feed: prices in toman with Persian digits and separators, an
   * array keyed by symbol, a Jalali time; and two rial prices as JSON
   * numbers, one past 2^53 and one a decimal with its trailing zero, written
   * as text (as a feed writes them: a JavaScript number could hold neither).
   */
  const tomanText = (usdToman: string) =>
    JSON.stringify({
      ok: true,
      updated: persian(tehran.jalaliDateTime(Date.now() - 60_000)),
      data: [
        { symbol: 'EUR', name: 'یورو', sell: '۱۲۸٬۱۵۰' },
        { symbol: 'USD', name: 'دلار', sell: usdToman },
        { symbol: 'GBP', name: 'پوند', sell: 'N/A' },
      ],
      coins: { emami: '<emami>' },
      energy: { brent: '<brent>' },
    })
      .replace('"<emami>"', '9007199254740993')
      .replace('"<brent>"', '65.250');

  // Two days ago, so the reference date is past its 16:00 in Frankfurt whatever the hour here.
  const ecbDate = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
  const ecbRates = { USD: '1.1650', JPY: '176.84', GBP: '0.87600', IRR: '9007199254740993' };
  const csvText = (bahar: string) =>
    'source_key,value,updated_at\n' +
    `ir_coin_bahar,"${bahar}",${Math.floor(Date.now() / 1000) - 30}\n` +
    `intl_xag_usd_spot,${persian('50')}٫${persian('250')},${new Date(Date.now() - 30_000).toISOString()}\n` +
    'ir_gold_18k_gram,12.3.4\n' +
    'ir_gold_19k_gram,1000\n';

  const sources = async () => {
    const response = await get(server!.base, '/v1/status', apiKey);
    assert.equal(response.status, 200, response.text.slice(0, 300));
    return new Map((response.json as { sources: SourceStatus[] }).sources.map((s) => [s.name, s]));
  };
  const keysPath = '/v1/rates/usd_free,coin_emami,oil_brent,gbp_free,eur_free,fx_eurusd,fx_usdjpy,coin_bahar,silver_ounce,gold_18k';
  const detail = async (query = '') => {
    const response = await get(server!.base, `${keysPath}${query}`, apiKey);
    assert.equal(response.status, 200, response.text.slice(0, 300));
    return response;
  };
  /** Each rate's value exactly as the body writes it (JSON.parse would round a value past 2^53). */
  const rawValues = (body: string) => Object.fromEntries([...body.matchAll(/"key":"([a-z0-9_]+)"[^{}]*?"value":([^,]+),/g)].map((m) => [m[1]!, m[2]!]));

  const expected = {
    usd_free: '1100250', // ۱۱۰٬۰۲۵ toman × 10
    coin_emami: '9007199254740993',
    oil_brent: '65.250',
    eur_free: '9007199254740993',
    fx_eurusd: '1.1650',
    fx_usdjpy: new Big('176.84').div('1.1650').round(6, Big.roundHalfEven).toFixed(),
    coin_bahar: '9007199254740995',
    silver_ounce: '50.250',
  };

  before(async () => {
    assertBuilt();
    feedBody = tomanText('۱۱۰٬۰۲۵');
    feed = createServer((request, response) => {
      feedRequests.push({ accept: request.headers.accept });
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.end(feedBody);
    });
    await new Promise<void>((resolve) => feed!.listen(0, '127.0.0.1', resolve));
    const feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/api/prices`;
    writeRaw(ecbPath, ecbXml(ecbDate, ecbRates));
    writeRaw(csvPath, csvText('9,007,199,254,740,995'));

    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        catalogue: catalogueWithoutTops(join(dir.path, 'catalogue'), UNBOUNDED),
        sources: [
          {
            name: 'toman-feed',
            type: 'http',
            url: feedUrl,
            format: 'mapping',
            poll_seconds: 0.5,
            max_backoff_seconds: 1,
            max_age_seconds: 600,
            updated_at_path: '$.updated',
            items: {
              ir_fx_free_usd: { path: "$.data[?@.symbol=='USD'].sell", scale: '10' },
              ir_fx_free_gbp: { path: "$.data[?@.symbol=='GBP'].sell", scale: '10' },
              ir_fx_free_usd_sell: { path: "$.data[?@.symbol=='USD'].buy", scale: '10' },
              ir_coin_emami: '$.coins.emami',
              intl_crude_brent: '$.energy.brent',
            },
          },
          {
            name: 'ecb',
            type: 'file',
            path: ecbPath,
            format: 'ecb',
            poll_seconds: 0.5,
            // A reference date is a day old by the next one, and three over a weekend.
            max_age_seconds: 5 * 86_400,
            items: { intl_fx_eurusd: 'USD', intl_fx_usdjpy: 'JPY/USD', ir_fx_free_eur: 'IRR', intl_fx_usdchf: 'CHF/USD' },
          },
          { name: 'desk-csv', type: 'file', path: csvPath, format: 'csv', poll_seconds: 0.5, max_age_seconds: 600 },
        ],
      }),
    );
    const env = { NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'info' };
    server = await startServer(env);
    await cliOk(cleanEnv(env), ['accounts', 'add', 'formats-user', '--plan', 'enterprise']);
    apiKey = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', 'formats-user', '--json'])).stdout) as { key: string }).key;
  });

  after(async () => {
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (formats) stderr:\n${server.stderr.slice(-3000)}`);
    }
    await new Promise<void>((resolve) => (feed ? feed.close(() => resolve()) : resolve()));
    dir.cleanup();
  });

  it('1. serves every format’s values to the digit: past 2^53, decimals with their trailing zero, toman × 10, an exact ECB cross', async () => {
    const { value: response } = await pollUntil(
      () => detail(),
      (r) => Object.entries(expected).every(([key, value]) => rawValues(r.text)[key] === value),
      15_000,
      200,
      (r) => JSON.stringify(rawValues(r.text)),
    );
    const rates = new Map((response.json as { rates: Rate[] }).rates.map((rate) => [rate.key, rate]));
    const from: Record<string, string> = { usd_free: 'toman-feed', coin_emami: 'toman-feed', oil_brent: 'toman-feed', eur_free: 'ecb', fx_eurusd: 'ecb', fx_usdjpy: 'ecb', coin_bahar: 'desk-csv', silver_ounce: 'desk-csv' };
    for (const [key, source] of Object.entries(from)) assert.deepEqual([key, rates.get(key)!.status, rates.get(key)!.source], [key, 'ok', source]);
    assert.equal(expected.fx_usdjpy, '151.793991');
    // What failed to read is served by no one.
    for (const key of ['gbp_free', 'gold_18k']) assert.equal(rates.get(key)!.status, 'unavailable', key);
    // The http source asked for JSON.
    assert.equal(feedRequests[0]?.accept, 'application/json');
  });

  it('2. /v1/status gives each source’s format, items mapped and items dropped with their reasons', async () => {
    const all = await sources();
    const summary = (name: string) => {
      const s = all.get(name)!;
      return { state: s.state, format: s.format, mapped: s.mapped, dropped: s.dropped, reasons: s.dropped_reasons.map((d) => [d.reason, d.count, d.source_keys]) };
    };
    assert.deepEqual(summary('toman-feed'), {
      state: 'active',
      format: 'mapping',
      mapped: 3,
      dropped: 2,
      reasons: [
        ['no_match', 1, ['ir_fx_free_usd_sell']],
        ['not_a_number', 1, ['ir_fx_free_gbp']],
      ],
    });
    assert.deepEqual(summary('ecb'), { state: 'active', format: 'ecb', mapped: 3, dropped: 1, reasons: [['no_currency', 1, ['intl_fx_usdchf']]] });
    assert.deepEqual(summary('desk-csv'), { state: 'active', format: 'csv', mapped: 2, dropped: 1, reasons: [['not_a_number', 1, ['ir_gold_18k_gram']]] });
    assert.deepEqual(all.get('desk-csv')!.unknown_keys, { count: 1, sample: ['ir_gold_19k_gram'] });
    assert.equal(all.get('toman-feed')!.dropped_reasons[1]!.description, 'value is not a number');
    assert.equal(all.get('toman-feed')!.error, '2 values dropped');
    assert.ok(!JSON.stringify([...all.values()]).includes('N/A'), "the feed's own text is never repeated");
  });

  it('3. expand=sources says why a source that had the item gave no value', async () => {
    const response = await detail('?expand=sources');
    const rates = new Map((response.json as { rates: Rate[] }).rates.map((rate) => [rate.key, rate]));
    const view = (key: string, source: string) => rates.get(key)!.sources!.find((s) => s.name === source)!;
    assert.deepEqual(view('gbp_free', 'toman-feed'), { ...view('gbp_free', 'toman-feed'), value: null, rejected: 'dropped', dropped_reason: 'not_a_number' });
    assert.deepEqual(view('gold_18k', 'desk-csv'), { ...view('gold_18k', 'desk-csv'), value: null, rejected: 'dropped', dropped_reason: 'not_a_number' });
    assert.deepEqual(view('usd_free', 'toman-feed'), { ...view('usd_free', 'toman-feed'), rejected: null, dropped_reason: null });
    // A source without the item at all says nothing of it.
    assert.deepEqual(view('gbp_free', 'ecb'), { ...view('gbp_free', 'ecb'), value: null, rejected: null, dropped_reason: null });
  });

  it('4. the public page shows formats and counts with fixed phrases, and of the feed’s text only an unmatched item key shaped like a catalogue key', async () => {
    const page = await get(server!.base, '/status');
    assert.equal(page.status, 200);
    for (const phrase of ['JSON mapping: 3 mapped, 2 dropped (path matched nothing 1, not a number 1)', 'ECB reference rates: 3 mapped, 1 dropped (currency not in the document 1)', 'CSV: 2 mapped, 1 dropped (not a number 1)', 'نگاشت JSON: ۳ مقدار خوانده شد']) {
      assert.ok(page.text.includes(phrase), `the status page lacks "${phrase}"`);
    }
    for (const hidden of ['N/A', 'ir_fx_free_gbp', 'ir_gold_18k_gram', 'intl_fx_usdchf', '127.0.0.1']) assert.ok(!page.text.includes(hidden), `the status page shows "${hidden}"`);
    // The one item key that matches no reference is named, so an operator sees the typo where they look.
    assert.ok(page.text.includes('ir_gold_19k_gram'), 'the status page names the unmatched item key');
  });

  it('5. a broken document of each format keeps the last good values until a good one comes back', async () => {
    const before = rawValues((await detail()).text);
    feedBody = '{"ok":true,"data":[{"symbol":"USD","sell":"۱۱۰٬۰';
    writeRaw(ecbPath, '<gesmes:Envelope><Cube><Cube time="2026-11-24">');
    writeRaw(csvPath, 'ir_coin_bahar,"9007199254740995\n');
    const broken = await pollUntil(sources, (all) => ['toman-feed', 'ecb', 'desk-csv'].every((name) => all.get(name)!.state === 'degraded'), 10_000, 200, (all) => JSON.stringify([...all.values()].map((s) => [s.name, s.state, s.error])));
    const [json, xml, csv] = ['toman-feed', 'ecb', 'desk-csv'].map((name) => broken.value.get(name)!.error);
    // Where each broke, never a piece of the document.
    assert.match(json!, /^invalid JSON \(at character \d+\)$/);
    assert.equal(xml, 'invalid XML (line 1)');
    assert.match(csv!, /^invalid CSV \(CSV_QUOTE_NOT_CLOSED, line \d\)$/);
    // The values stay those of the last good documents, to the digit, from the same sources.
    // And still so after the feed was read again (twice): the files' sources are checked on the same 0.5 s poll,
    // but an unchanged file's check shows nowhere, so the feed's next request is the marker for all three.
    for (let i = 0; i < 3; i++) {
      if (i > 0) {
        const asked = feedRequests.length;
        await pollUntil(async () => feedRequests.length, (n) => n > asked, 5000, 20);
      }
      const response = await detail();
      const now = rawValues(response.text);
      for (const key of Object.keys(expected)) assert.equal(now[key], before[key], key);
      for (const rate of (response.json as { rates: Rate[] }).rates.filter((r) => r.key in expected)) assert.ok(rate.source !== null && rate.status !== 'unavailable', `${rate.key}: ${rate.status}`);
    }
    const page = await get(server!.base, '/status');
    assert.ok(page.text.includes('invalid document'), 'the public page names the kind of failure');

    feedBody = tomanText('۱۱۰٬۰۵۰');
    writeRaw(ecbPath, ecbXml(ecbDate, { ...ecbRates, USD: '1.1700' }));
    writeRaw(csvPath, csvText('9,007,199,254,740,997'));
    await pollUntil(sources, (all) => ['toman-feed', 'ecb', 'desk-csv'].every((name) => all.get(name)!.state === 'active'), 10_000, 200);
    const { value: recovered } = await pollUntil(
      () => detail(),
      (r) => {
        const now = rawValues(r.text);
        return now.usd_free === '1100500' && now.fx_eurusd === '1.1700' && now.coin_bahar === '9007199254740997';
      },
      10_000,
      200,
      (r) => JSON.stringify(rawValues(r.text)),
    );
    assert.equal(rawValues(recovered.text).fx_usdjpy, new Big('176.84').div('1.17').round(6, Big.roundHalfEven).toFixed());
    assert.ok(server!.running, server!.output());
  });

  it('6. the log warns of the dropped items once, naming reasons and keys', () => {
    const warnings = server!.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; source?: string })
      .filter((line) => / items dropped: /.test(line.msg));
    assert.deepEqual(
      warnings.map((line) => [line.level, line.msg]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
      [
        [40, 'source toman-feed: items dropped: path matched nothing: 1 (ir_fx_free_usd_sell); value is not a number: 1 (ir_fx_free_gbp)'],
        [40, 'source ecb: items dropped: currency not in the document: 1 (intl_fx_usdchf)'],
        [40, 'source desk-csv: items dropped: value is not a number: 1 (ir_gold_18k_gram)'],
      ].sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
      JSON.stringify(warnings),
    );
  });
});

describe('a bad mapping stops the start', () => {
  const dir = tempDir('nerkh-formats-refused-');
  after(() => dir.cleanup());

  const refusal = async (source: Record<string, unknown>) => {
    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'plain', type: 'file', path: 'plain.json' }, { name: 'feed', type: 'http', url: 'http://127.0.0.1:9/feed', ...source }] }));
    const result = await runCli(cleanEnv({ NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_PORT: String(await freePort()) }), ['serve']);
    assert.notEqual(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.equal(result.stdout.includes('nerkh listening'), false);
    return { code: result.code, message: result.stderr.trim() };
  };

  it('names the source and the item of an invalid JSONPath, a bad scale, an unknown source_key and a bad ECB item', async () => {
    assertBuilt();
    const at = (field: string) => `sources[1].${field}: source "feed": `;
    const cases: [Record<string, unknown>, string][] = [
      [{ format: 'mapping', items: { ir_fx_free_usd: "$.data[?@.symbol=='USD'" } }, `${at('items.ir_fx_free_usd')}invalid JSONPath "$.data[?@.symbol=='USD'": unclosed bracketed selection`],
      [{ format: 'mapping', items: { ir_fx_free_usd: { path: '$.usd', scale: 'ten' } } }, `${at('items.ir_fx_free_usd.scale')}"ten" is not a decimal above zero`],
      [{ format: 'mapping', items: { usd_free: '$.usd' } }, `${at('items.usd_free')}"usd_free" is no source_key of the catalogue (the reference usd_free reads source_key "ir_fx_free_usd")`],
      [{ format: 'ecb', items: { intl_fx_eurusd: 'usd' } }, `${at('items.intl_fx_eurusd')}"usd" is not a currency code ("USD": US dollars per euro) or a cross ("JPY/USD": yen per US dollar)`],
      [{ format: 'ecb', items: { intl_fx_usdjpy: 'JPY/USD/EUR' } }, `${at('items.intl_fx_usdjpy')}"JPY/USD/EUR" is not a currency code`],
    ];
    for (const [source, message] of cases) {
      const { code, message: printed } = await refusal(source);
      assert.equal(code, 2, printed);
      assert.ok(printed.startsWith('nerkh: config') && printed.includes(message), `"${printed}" lacks "${message}"`);
    }
  });
});
