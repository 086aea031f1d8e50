/**
 * Failover across the three kinds of source, end to end: gold_18k with
 * priority [feed, desk, derived] on a real `nerkh serve`. The feed, a mapped
 * JSON document priced in toman with Persian digits, serves it while healthy; broken, the price the desk set with `nerkh prices set`
 * takes over; once that price expires, the value derived from gold_ounce and
 * usd_free (another real source) does; when the feed recovers, it serves again.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/e2e/manual-failover.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import { tempDir, writeRaw, writeSource } from '../support/env.js';

/** A bazaar feed as one is published: prices in toman, Persian digits, in an array keyed by symbol. */
function writeMappedFeed(path: string, toman: string): void {
  writeRaw(path, JSON.stringify({ updated: new Date().toISOString(), data: [{ symbol: 'USD', sell: '۱۰۹٬۸۷۵' }, { symbol: 'GOLD18', sell: toman }] }));
}
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from './helpers.js';

const GOLD_18K = 'gold_ounce * usd_free / 31.1034768 * 0.75';
const LIVE_PLAN = { services: ['detail', 'status'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };

interface SourceEntry {
  name: string;
  value: number | null;
  state: string;
  used: boolean;
  rejected: string | null;
}
interface Rate {
  key: string;
  value: number | null;
  status: string;
  source: string | null;
  sources: SourceEntry[];
}

describe('e2e: gold_18k fails over from a broken feed to the desk, then to its derived value, and back', () => {
  const dir = tempDir('nerkh-e2e-manual-failover-');
  const feedPath = join(dir.path, 'feed.json');
  const worldPath = join(dir.path, 'world.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = { NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_LOG_LEVEL: 'warn' };
  const cli = cleanEnv(env);
  const derivedValue = new Big('2650.75').times('1000100').div('31.1034768').times('0.75').round(0, Big.roundHalfEven).toNumber();
  let server: ServerProcess | null = null;
  let key = '';

  const gold = async (): Promise<Rate> => {
    const response = await get(server!.base, '/v1/rates/gold_18k?expand=sources', key);
    assert.equal(response.status, 200, response.text);
    return (response.json as { rates: Rate[] }).rates[0]!;
  };
  const served = (rate: Rate) => `${rate.status} ${rate.source} ${rate.value} ${JSON.stringify(rate.sources.map((s) => [s.name, s.value, s.used, s.rejected]))}`;

  before(async () => {
    assertBuilt();
    writeMappedFeed(feedPath, '۶٬۴۰۰٬۰۰۰');
    writeSource(worldPath, { intl_xau_usd_spot: 2650.75, ir_fx_free_usd: 1_000_100 });
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [
          {
            name: 'feed',
            type: 'file',
            path: feedPath,
            max_age_seconds: 600,
            poll_seconds: 0.2,
            format: 'mapping',
            updated_at_path: '$.updated',
            items: { ir_gold_18k_gram: { path: "$.data[?@.symbol=='GOLD18'].sell", scale: '10' } },
          },
          { name: 'world', type: 'file', path: worldPath, max_age_seconds: 600, poll_seconds: 0.2 },
          { name: 'desk', type: 'manual' },
        ],
        derived: { gold_18k: GOLD_18K },
        source_priority: { gold_18k: ['feed', 'desk', 'derived'] },
        plans: { live: LIVE_PLAN },
      }),
    );
    server = await startServer(env);
    await cliOk(cli, ['accounts', 'add', 'failover-reader', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli, ['keys', 'issue', 'failover-reader', '--json'])).stdout) as { key: string }).key;
    await pollUntil(() => get(server!.base, '/v1/rates/gold_18k', key), (r) => r.status === 200, 5000);
  });

  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  let deskExpiry = 0;

  it('serves the healthy feed first, with the desk and the derived value waiting behind it', async () => {
    deskExpiry = Date.now() + 12_000;
    const rate = await gold();
    // The sources listed in source_priority first, in its order; the others (world) after them.
    assert.deepEqual(
      rate.sources.map((s) => [s.name, s.value, s.used, s.rejected]),
      [
        ['feed', 64_000_000, true, null],
        ['desk', null, false, null],
        ['derived', derivedValue, false, null],
        ['world', null, false, null],
      ],
    );
    await cliOk(cli, ['prices', 'set', 'gold_18k', '64500000', '--expires', new Date(deskExpiry).toISOString(), '--note', 'in case the feed breaks']);
    const list = JSON.parse((await cliOk(cli, ['prices', 'list', '--json'])).stdout) as { reference: string; value: string; state: string }[];
    assert.deepEqual(list.map((row) => [row.reference, row.value, row.state]), [['gold_18k', '64500000', 'fresh']]);
    // Once the server holds the desk's price (a candidate behind the feed), the feed is still the one served.
    await pollUntil(gold, (rate) => rate.sources.some((s) => s.name === 'desk' && s.value === 64_500_000), 5000, 50, served);
    assert.deepEqual([(await gold()).source, (await gold()).value], ['feed', 64_000_000]);
  });

  it('serves the desk price once the feed breaks', async (t) => {
    writeRaw(feedPath, '{"updated": "2026-01-01T00:00:00Z", "data": [{"symbol": "GOLD18", "sell": "۶٬۴۰');
    const broken = Date.now();
    const { value: rate } = await pollUntil(gold, (r) => r.source === 'desk', 5000, 50, served);
    t.diagnostic(`desk served ${Date.now() - broken} ms after the feed broke`);
    assert.ok(Date.now() < deskExpiry, 'the desk price expired before the test could see it served');
    assert.deepEqual([rate.status, rate.value], ['ok', 64_500_000]);
    assert.deepEqual(
      rate.sources.map((s) => [s.name, s.state, s.used, s.rejected]),
      [
        ['feed', 'degraded', false, 'unhealthy'],
        ['desk', 'active', true, null],
        ['derived', 'active', false, null],
        ['world', 'active', false, null],
      ],
    );
  });

  it('serves the derived value once the desk price expires', async () => {
    const { value: rate } = await pollUntil(gold, (r) => r.source === 'derived', 15_000, 100, served);
    assert.ok(Date.now() >= deskExpiry, 'derived before the desk price expired');
    assert.deepEqual([rate.status, rate.value], ['ok', derivedValue]);
    assert.deepEqual(
      rate.sources.map((s) => [s.name, s.used, s.rejected]),
      [
        ['feed', false, 'unhealthy'],
        ['desk', false, 'stale'],
        ['derived', true, null],
        ['world', false, null],
      ],
    );
  });

  it('goes back to the feed once it recovers', async (t) => {
    writeMappedFeed(feedPath, '۶٬۴۱۰٬۰۰۰');
    const fixed = Date.now();
    const { value: rate } = await pollUntil(gold, (r) => r.source === 'feed', 5000, 50, served);
    t.diagnostic(`the feed served again ${Date.now() - fixed} ms after it recovered`);
    assert.deepEqual([rate.status, rate.value], ['ok', 64_100_000]);
  });
});
