/**
 * The rate-limit headers of the real server: a plan of 5 requests a minute
 * allows 5 and refuses the 6th, and for a plan whose day is barely above its
 * minute the headers name one window, answer after answer: the day, which a
 * client at the minute's pace would spend in two minutes, until the minute is
 * spent and is what refuses. The server's clock starts at the top of a minute
 * (minuteStartClock), so each test's requests fall in one minute window.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, intoTehranDay, minuteStartClock, startServer, type Response, type ServerProcess } from './helpers.js';

const DAY_MS = 86_400_000;
const errorOf = (response: Response) => (response.json as { error?: string } | undefined)?.error;

describe('rate-limit headers on consecutive answers', { timeout: 150_000 }, () => {
  const tmp = tempDir('nerkh-e2e-window-');
  const dataDir = join(tmp.path, 'data');
  const configPath = join(tmp.path, 'nerkh.config.json');
  const env = { NERKH_DATA_DIR: dataDir, NERKH_CONFIG: configPath };
  /** Set as the server starts (after the accounts are made), so its minute begins then. */
  let clock: ReturnType<typeof minuteStartClock>;
  let server: ServerProcess;
  const keys: Record<string, string> = {};

  before(async () => {
    assertBuilt();
    writeFileSync(
      configPath,
      JSON.stringify({
        plans: {
          pacer: { services: ['catalogue', 'detail'], requests_per_minute: 30, requests_per_day: 40, refresh_interval_seconds: 1 },
          tiny: { services: ['catalogue', 'detail'], requests_per_minute: 5, refresh_interval_seconds: 1 },
        },
      }),
    );
    // Only `serve` creates a store: make it as serve does, so the accounts and keys exist before the server reads them.
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    for (const plan of ['pacer', 'tiny']) {
      await cliOk(cleanEnv(env), ['accounts', 'add', `${plan}-board`, '--plan', plan]);
      keys[plan] = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', `${plan}-board`, '--json'])).stdout) as { key: string }).key;
    }
    clock = minuteStartClock();
    server = await startServer({ ...env, ...clock.env });
  });

  after(async () => {
    await server?.kill();
    tmp.cleanup();
  });

  it('a plan of 5 requests a minute allows 5 and refuses the 6th with 429, Retry-After and rate-limit headers', async () => {
    // Both the raw detail path and a Fastify route draw on the same window.
    const paths = ['/v1/rates/usd_free', '/v1/rates/eur_free', '/v1/rates', '/v1/rates/usd_free', '/v1/rates?category=currency'];
    for (const [i, path] of paths.entries()) {
      const sentAt = clock.now();
      const r = await get(server.base, path, keys.tiny);
      assert.equal(r.status, 200, `request ${i + 1} (${path}): ${r.status} ${r.text.slice(0, 200)}`);
      assert.equal(r.headers.get('x-ratelimit-limit'), '5');
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(4 - i));
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      // The server reads the shifted clock: its window ends where the test's clock says.
      const toMinuteEnd = Math.ceil((60_000 - (sentAt % 60_000)) / 1000);
      assert.ok(Math.abs(reset - toMinuteEnd) <= 1, `x-ratelimit-reset ${reset} vs ${toMinuteEnd} s to the end of the minute`);
      assert.match(r.headers.get('ratelimit') ?? '', new RegExp(`^"minute";r=${4 - i};t=${reset}$`));
      assert.match(r.headers.get('ratelimit-policy') ?? '', /"minute";q=5;w=60/);
      assert.equal(r.headers.get('retry-after'), null);
    }
    for (const path of ['/v1/rates/usd_free', '/v1/rates']) {
      const sentAt = clock.now();
      const refused = await get(server.base, path, keys.tiny);
      assert.equal(refused.status, 429, `6th request (${path}): ${refused.status} ${refused.text.slice(0, 200)}`);
      assert.equal(errorOf(refused), 'RATE_LIMIT_EXCEEDED');
      assert.equal(refused.headers.get('cache-control'), 'no-store');
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `retry-after ${refused.headers.get('retry-after')}`);
      const toMinuteEnd = Math.ceil((60_000 - (sentAt % 60_000)) / 1000);
      assert.ok(Math.abs(retryAfter - toMinuteEnd) <= 1, `retry-after ${retryAfter} vs ${toMinuteEnd} s to the end of the minute`);
      assert.equal(refused.headers.get('x-ratelimit-limit'), '5');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.match(refused.headers.get('ratelimit') ?? '', /^"minute";r=0;t=\d+$/);
      assert.match(refused.headers.get('ratelimit-policy') ?? '', /"minute";q=5;w=60/);
    }
  });

  it('name the day on 20 answers in a row (30 a minute, 40 a day), then the minute once it is spent', async () => {
    const paths = ['/v1/rates/usd_free', '/v1/rates?category=gold', '/v1/rates/eur_free,gold_18k', '/v1/rates'];
    const answers: { sentAt: number; response: Response }[] = [];
    for (let i = 0; i < 20; i++) {
      const sentAt = clock.now();
      answers.push({ sentAt, response: await get(server.base, paths[i % paths.length]!, keys.pacer) });
    }
    answers.forEach(({ sentAt, response }, i) => {
      const seen = `answer ${i + 1}: ${response.status} ${response.headers.get('ratelimit')}`;
      assert.equal(response.status, 200, `${seen} ${response.text.slice(0, 200)}`);
      assert.equal(response.headers.get('ratelimit-policy'), '"minute";q=30;w=60, "day";q=40;w=86400', seen);
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      assert.equal(response.headers.get('ratelimit'), `"day";r=${39 - i};t=${reset}`, seen);
      assert.equal(response.headers.get('x-ratelimit-limit'), '40', seen);
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(39 - i), seen);
      const toMidnight = Math.ceil((DAY_MS - intoTehranDay(sentAt)) / 1000);
      assert.ok(Math.abs(reset - toMidnight) <= 2, `${seen}: resets in ${reset} s, midnight is in ${toMidnight} s`);
    });

    for (let i = 0; i < 9; i++) {
      const response = await get(server.base, '/v1/rates/usd_free', keys.pacer);
      assert.equal(response.headers.get('ratelimit'), `"day";r=${19 - i};t=${response.headers.get('x-ratelimit-reset')}`);
    }
    // The minute's thirtieth: nothing left of it, so it is the window that refuses next.
    const last = await get(server.base, '/v1/rates/usd_free', keys.pacer);
    assert.equal(last.status, 200, last.text.slice(0, 200));
    assert.match(last.headers.get('ratelimit') ?? '', /^"minute";r=0;t=\d+$/);
    assert.equal(last.headers.get('x-ratelimit-limit'), '30');
    const refused = await get(server.base, '/v1/rates/usd_free', keys.pacer);
    assert.equal(refused.status, 429, refused.text.slice(0, 200));
    assert.match(refused.headers.get('ratelimit') ?? '', /^"minute";r=0;t=\d+$/);
    assert.match(String((refused.json as { message?: string }).message), /minute limit of 30/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
  });
});
