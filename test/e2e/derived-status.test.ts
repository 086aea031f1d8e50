/**
 * The `derived` source on the status endpoints, end to end: a real
 * `nerkh serve` with two formulas, one reading a reference from a source
 * file that appears late and goes stale quickly. /v1/status, the public
 * /status page (Persian and English) and `expand=sources` follow it:
 * degraded naming the input without a value, active once every input is
 * fresh, degraded naming the stale input, active again when it is fresh.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/e2e/derived-status.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeSource } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from './helpers.js';

const LIVE_PLAN = { services: ['detail', 'status'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };
/** The bazaar's data turns stale this long after its updated_at. */
const BAZAAR_MAX_AGE_SECONDS = 5;

interface SourceStatus {
  name: string;
  type: string;
  state: string;
  last_update: string | null;
  error: string | null;
  format: string;
  mapped: number;
  derived?: { references: number; computed: number; stale_inputs: string[]; missing_inputs: string[] };
}
interface Status {
  service: { state: string; message: string };
  sources: SourceStatus[];
}

describe('e2e: the derived source on /v1/status and the /status page', () => {
  const dir = tempDir('nerkh-e2e-derived-status-');
  const worldPath = join(dir.path, 'world.json');
  const bazaarPath = join(dir.path, 'bazaar.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = { NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_LOG_LEVEL: 'warn' };
  let server: ServerProcess | null = null;
  let key = '';

  const status = async (): Promise<Status> => {
    const response = await get(server!.base, '/v1/status', key);
    assert.equal(response.status, 200, response.text);
    return response.json as Status;
  };
  const derivedOf = (s: Status) => s.sources.find((source) => source.name === 'derived')!;
  const show = (s: Status) => JSON.stringify([s.service, derivedOf(s)]);
  const page = async () => {
    const response = await get(server!.base, '/status');
    assert.equal(response.status, 200);
    return response.text;
  };
  /** The derived source's row of the public page. */
  const derivedRow = (html: string) => /<tr><td data-label="منبع · Source" dir="ltr">derived<\/td>.*?<\/tr>/s.exec(html)?.[0] ?? '';
  /** The state `expand=sources` gives the derived source of gold_18k. */
  const expandedState = async () => {
    const response = await get(server!.base, '/v1/rates/gold_18k?expand=sources', key);
    assert.equal(response.status, 200, response.text);
    return (response.json as { rates: { sources: { name: string; state: string }[] }[] }).rates[0]!.sources.find((s) => s.name === 'derived')!.state;
  };

  before(async () => {
    assertBuilt();
    writeSource(worldPath, { intl_xau_usd_spot: 2650.75, crypto_usdt_usd: 1.000001 });
    // The bazaar file does not exist yet: usd_free has no value.
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [
          { name: 'world', type: 'file', path: worldPath, max_age_seconds: 600, poll_seconds: 0.2 },
          { name: 'bazaar', type: 'file', path: bazaarPath, max_age_seconds: BAZAAR_MAX_AGE_SECONDS, poll_seconds: 0.2 },
        ],
        derived: { gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75', usdc_usd: 'usdt_usd / 2' },
        plans: { live: LIVE_PLAN },
      }),
    );
    server = await startServer(env);
    const cli = cleanEnv(env);
    await cliOk(cli, ['accounts', 'add', 'derived-status', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli, ['keys', 'issue', 'derived-status', '--json'])).stdout) as { key: string }).key;
  });

  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('lists derived with its type, format and formulas; degraded while an input has no value, naming it', async () => {
    const { value: s } = await pollUntil(status, (v) => derivedOf(v).mapped === 1, 5000, 100, show);
    assert.deepEqual(
      s.sources.map((source) => [source.name, source.type, source.format]),
      [
        ['world', 'file', 'nerkh'],
        ['bazaar', 'file', 'nerkh'],
        ['derived', 'derived', 'formula'],
      ],
    );
    const derived = derivedOf(s);
    assert.equal(derived.state, 'degraded');
    assert.deepEqual(derived.derived, { references: 2, computed: 1, stale_inputs: [], missing_inputs: ['usd_free'] });
    assert.equal(derived.error, 'inputs without a value: usd_free; 1 of 2 formulas without a value: gold_18k (no value for usd_free)');
    assert.match(s.service.message, /derived degraded/);
    const row = derivedRow(await page());
    assert.ok(row.includes('فرمول: ۱ از ۲ مرجع محاسبه شد') && row.includes('formulas: 1 of 2 references computed'), row);
    assert.ok(row.includes('ورودی بدون مقدار: <code dir="ltr">usd_free</code>') && row.includes('input without a value: <code dir="ltr">usd_free</code>'), row);
  });

  it('is active once every input of every formula is fresh, dated by its oldest input', async () => {
    writeSource(bazaarPath, { ir_fx_free_usd: 1_000_100 });
    const { value: s } = await pollUntil(status, (v) => derivedOf(v).state === 'active', 5000, 100, show);
    const derived = derivedOf(s);
    assert.deepEqual(derived.derived, { references: 2, computed: 2, stale_inputs: [], missing_inputs: [] });
    assert.equal(derived.error, null);
    assert.equal(derived.mapped, 2);
    // The oldest input of its values: world's, written before the bazaar's.
    assert.equal(derived.last_update, s.sources.find((source) => source.name === 'world')!.last_update);
    assert.equal(await expandedState(), 'active');
    const row = derivedRow(await page());
    assert.ok(row.includes('فعال · active') && row.includes('formulas: 2 of 2 references computed'), row);
  });

  it('is degraded naming the stale input once the bazaar outlives its max age, everywhere it is shown', async () => {
    const { value: s } = await pollUntil(status, (v) => derivedOf(v).state === 'degraded', (BAZAAR_MAX_AGE_SECONDS + 5) * 1000, 200, show);
    const derived = derivedOf(s);
    assert.deepEqual(derived.derived, { references: 2, computed: 2, stale_inputs: ['usd_free'], missing_inputs: [] });
    assert.equal(derived.error, 'stale inputs: usd_free');
    assert.match(s.service.message, /derived degraded/);
    assert.equal(await expandedState(), 'degraded');
    const row = derivedRow(await page());
    assert.ok(row.includes('مختل · degraded'), row);
    assert.ok(row.includes('ورودی کهنه: <code dir="ltr">usd_free</code>') && row.includes('stale input: <code dir="ltr">usd_free</code>'), row);
  });

  it('is active again when the input is fresh again', async () => {
    writeSource(bazaarPath, { ir_fx_free_usd: 1_000_200 });
    await pollUntil(status, (v) => derivedOf(v).state === 'active', 5000, 100, show);
    assert.equal(await expandedState(), 'active');
  });
});
