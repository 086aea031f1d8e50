/**
 * Derived references end to end: a real `nerkh serve` fed by a real source
 * file, each derived value checked to the digit over HTTP against the same
 * formula worked by hand with big.js (ties included), its inputs listed by
 * `expand=sources`; and a start refused, with the formula named, for an
 * unknown reference or a cycle.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/e2e/derived.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import { tempDir, writeRaw } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, runCli, startServer, type ServerProcess } from './helpers.js';

const GOLD_18K = 'gold_ounce * usd_free / 31.1034768 * 0.75';
const LIVE_PLAN = { services: ['detail', 'status'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };

/** The formula worked by hand, as the docs describe it: big.js, division to 40 places, rounded once at the end, half to even. */
function byHand(goldOunce: string, usdFree: string, decimals: number): string {
  const Precise = Big();
  Precise.DP = 40;
  return new Precise(goldOunce).times(usdFree).div('31.1034768').times('0.75').round(decimals, Big.roundHalfEven).toFixed();
}

/** A source document with each value written as the given number text, digits a double would lose included. */
function writeFeed(path: string, items: Record<string, string>): void {
  const entries = Object.entries(items).map(([key, value]) => `${JSON.stringify(key)}:${value}`);
  writeRaw(path, `{"updated_at":${JSON.stringify(new Date().toISOString())},"items":{${entries.join(',')}}}`);
}

/** The `"value":…` number text of one rate in a detail answer, exactly as written. */
function valueText(body: string, key: string): string | null {
  const match = new RegExp(`"key":"${key}"[^{}]*?"value":(null|-?[0-9.eE+-]+)`).exec(body);
  return match ? match[1]! : null;
}

describe('e2e: derived references served to the digit', () => {
  const dir = tempDir('nerkh-e2e-derived-');
  const feedPath = join(dir.path, 'feed.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = { NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_LOG_LEVEL: 'warn' };
  let server: ServerProcess | null = null;
  let key = '';
  const detail = async (path: string) => {
    const response = await get(server!.base, path, key);
    assert.equal(response.status, 200, response.text);
    return response.text;
  };

  before(async () => {
    assertBuilt();
    // gold_ounce × usd_free = 31.1034768 × 102469134, so gold_18k is exactly 76851850.5 rials: a tie, to the even 76851850.
    // usdt_usd / 2 = 0.5000005: a tie at 6 decimals, to the even 0.5.
    writeFeed(feedPath, { intl_xau_usd_spot: '3110.34768', ir_fx_free_usd: '1024691.34', crypto_usdt_usd: '1.000001' });
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [{ name: 'feed', type: 'file', path: feedPath, max_age_seconds: 600, poll_seconds: 0.2 }],
        derived: { '18ayar': GOLD_18K, usdc_usd: 'usdt_usd / 2', coin_emami: '(gold_18k / 0.75) * 0.9 * 8.133' },
        plans: { live: LIVE_PLAN },
      }),
    );
    server = await startServer(env);
    const cli = cleanEnv(env);
    await cliOk(cli, ['accounts', 'add', 'derived-reader', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli, ['keys', 'issue', 'derived-reader', '--json'])).stdout) as { key: string }).key;
    await pollUntil(() => get(server!.base, '/v1/rates/gold_18k', key), (r) => r.status === 200, 5000);
  });

  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('rounds an exact half to the even neighbour, in whole rials and at 6 decimals', async () => {
    const body = await detail('/v1/rates/gold_18k,usdc_usd');
    assert.equal(byHand('3110.34768', '1024691.34', 0), '76851850');
    assert.equal(valueText(body, 'gold_18k'), '76851850');
    assert.equal(valueText(body, 'usdc_usd'), '0.5');
    const rates = (JSON.parse(body) as { rates: { key: string; status: string; source: string }[] }).rates;
    assert.deepEqual(
      rates.map((rate) => [rate.key, rate.status, rate.source]),
      [
        ['gold_18k', 'ok', 'derived'],
        ['usdc_usd', 'ok', 'derived'],
      ],
    );
  });

  it('equals the formula worked by hand with big.js for inputs with more digits than a double holds, and lists the inputs used', async () => {
    const goldOunce = '2650.12345678901234567';
    const usdFree = '1023456.7891';
    writeFeed(feedPath, { intl_xau_usd_spot: goldOunce, ir_fx_free_usd: usdFree, crypto_usdt_usd: '1.000123456789' });
    const expected = byHand(goldOunce, usdFree, 0);
    const { value: body } = await pollUntil(() => detail('/v1/rates/gold_18k,usdc_usd,coin_emami?expand=sources'), (text) => valueText(text, 'gold_18k') === expected, 5000, 50, (t) => t.slice(0, 1500));
    assert.equal(valueText(body, 'usdc_usd'), new Big('1.000123456789').div(2).round(6, Big.roundHalfEven).toFixed());
    // A derived reference read by another: the served gold_18k, not its unrounded value.
    assert.equal(valueText(body, 'coin_emami'), new Big(expected).div('0.75').times('0.9').times('8.133').round(0, Big.roundHalfEven).toFixed());
    // Inputs keep their digits too.
    assert.ok(body.includes(`{"key":"gold_ounce","value":${goldOunce},"currency":"USD",`), body.slice(0, 2000));
    const gold = (JSON.parse(body) as { rates: { key: string; updated_at: string; sources: { name: string; used: boolean; inputs?: { key: string; currency: string; status: string; source: string; updated_at: string }[] }[] }[] }).rates[0]!;
    assert.deepEqual(
      gold.sources.map((source) => [source.name, source.used]),
      [
        ['feed', false],
        ['derived', true],
      ],
    );
    const inputs = gold.sources[1]!.inputs!;
    assert.deepEqual(
      inputs.map((input) => [input.key, input.currency, input.status, input.source]),
      [
        ['gold_ounce', 'USD', 'ok', 'feed'],
        ['usd_free', 'IRR', 'ok', 'feed'],
      ],
    );
    assert.equal(gold.updated_at, inputs[0]!.updated_at);
    assert.equal(gold.sources[0]!.inputs, undefined);
  });
});

describe('e2e: a start refused for a bad derived formula', () => {
  const dir = tempDir('nerkh-e2e-derived-bad-');
  after(() => dir.cleanup());

  const refused = async (derived: Record<string, string>, message: string) => {
    const configPath = join(dir.path, `config-${Object.keys(derived).join('-')}.json`);
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'feed', type: 'file', path: join(dir.path, 'feed.json') }], derived }));
    const result = await runCli(cleanEnv({ NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_PORT: '0' }), ['serve'], 15_000);
    assert.equal(result.code, 2, `${message}: exit ${result.code}\n${result.stdout}${result.stderr}`);
    assert.equal(result.stderr, `nerkh: ${message}\n`);
    assert.doesNotMatch(result.stdout, /listening/);
  };

  it('names an unknown reference and the formula reading it', async () => {
    await refused({ gold_18k: 'gold_ounc * usd_free / 31.1034768 * 0.75' }, 'config: derived.gold_18k: unknown reference "gold_ounc"');
  });

  it('names a cycle, direct or through other derived references', async () => {
    await refused({ gold_18k: 'gold_24k * 0.75', gold_24k: 'gold_18k / 0.75' }, 'config: derived: cycle gold_18k → gold_24k → gold_18k');
    await refused({ gold_24k: 'gold_24k + 1' }, 'config: derived: cycle gold_24k → gold_24k');
  });

  it('names a formula that is not + - * / of names and decimal constants', async () => {
    await refused({ gold_18k: 'pow(gold_ounce, 2)' }, 'config: derived.gold_18k: "pow(gold_ounce, 2)": only + - * /, parentheses, decimal constants and reference names are allowed; functions are not');
  });
});
