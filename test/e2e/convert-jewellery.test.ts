/**
 * /v1/convert and /v1/jewellery end to end: a real `nerkh serve` fed by a
 * source file whose values are written here (one with more digits than a
 * double holds), asked over real HTTP, each figure checked to the digit
 * against the arithmetic worked by hand with a decimal library.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/e2e/convert-jewellery.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeRaw } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, startServer, type ServerProcess } from './helpers.js';

const PLAN = { services: ['detail'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };
/** 20 significant digits: a double would keep about 16. */
const GOLD_18K = '72345678.123456789012';

/** The number text of a field as the body writes it. */
function field(body: string, name: string): string | null {
  return new RegExp(`"${name}":(-?[0-9.]+)[,}]`).exec(body)?.[1] ?? null;
}

describe('e2e: convert and jewellery to the digit', () => {
  const dir = tempDir('nerkh-e2e-convert-');
  const feedPath = join(dir.path, 'feed.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = { NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_LOG_LEVEL: 'warn' };
  let server: ServerProcess | null = null;
  let key = '';
  const ask = async (path: string) => {
    const response = await get(server!.base, path, key);
    assert.equal(response.status, 200, response.text);
    return response.text;
  };

  before(async () => {
    assertBuilt();
    writeRaw(feedPath, `{"updated_at":${JSON.stringify(new Date().toISOString())},"items":{"ir_gold_18k_gram":${GOLD_18K},"ir_fx_free_usd":1030000,"ir_fx_free_gbp":3090000}}`);
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'feed', type: 'file', path: feedPath, max_age_seconds: 600, poll_seconds: 0.2 }], plans: { live: PLAN } }));
    server = await startServer(env);
    const cli = cleanEnv(env);
    await cliOk(cli, ['accounts', 'add', 'converter', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli, ['keys', 'issue', 'converter', '--json'])).stdout) as { key: string }).key;
    await pollUntil(() => get(server!.base, '/v1/rates/gold_18k', key), (r) => r.status === 200 && r.text.includes(GOLD_18K), 5000);
  });

  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('converts grams of gold to toman exactly, and a quotient that does not terminate half-even to 6 decimals', async () => {
    // 3.5 × 72345678.123456789012 ÷ 10, exact.
    const gold = await ask('/v1/convert?from=gold_18k&to=IRT&amount=3.5');
    assert.equal(field(gold, 'result'), '25320987.3432098761542');
    assert.ok(gold.includes(`"rates":[{"key":"gold_18k","title":`) && gold.includes(`"value":${GOLD_18K},`), gold);
    // 1,030,000 ÷ 3,090,000 = 1/3; twice that is 0.6666…, rounded up at the sixth.
    assert.equal(field(await ask('/v1/convert?from=usd&to=gbp&amount=1'), 'result'), '0.333333');
    assert.equal(field(await ask('/v1/convert?from=usd&to=gbp&amount=2'), 'result'), '0.666667');
  });

  it('prices a piece: every line exact, the total rounded half up in rial, and in toman on its own', async () => {
    // gold 2.75 × 72345678.123456789012; making 17.5 %; profit 7 %; VAT 10 %.
    const rial = await ask('/v1/jewellery?weight=2.75&making_percent=17.5');
    assert.deepEqual(
      ['gold', 'making', 'profit', 'vat', 'total'].map((name) => field(rial, name)),
      ['198950614.839506169783', '34816357.596913579712025', '16363688.07054938246465175', '5118004.566746296217667675', '255248665'],
    );
    // In toman the lines are a tenth, but the total (25,524,866.507…) rounds to 25,524,867, not 255,248,665 ÷ 10.
    const toman = await ask('/v1/jewellery?weight=2.75&making_percent=17.5&unit=toman');
    assert.deepEqual(
      ['gram_price', 'gold', 'vat', 'total'].map((name) => field(toman, name)),
      ['7234567.8123456789012', '19895061.4839506169783', '511800.4566746296217667675', '25524867'],
    );
    assert.ok(toman.includes('"currency":"IRT","gram_price"'), toman);
  });

  it('answers a bad number in the error envelope, naming the parameter', async () => {
    const response = await get(server!.base, '/v1/jewellery?weight=1e3&making_percent=5', key);
    assert.equal(response.status, 400);
    const body = JSON.parse(response.text) as { error: string; message: string };
    assert.equal(body.error, 'INVALID_PARAMETER');
    assert.match(body.message, /"weight"/);
  });
});
