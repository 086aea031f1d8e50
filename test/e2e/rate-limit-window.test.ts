/**
 * The rate-limit headers of the real server name one window, answer after
 * answer, for a plan whose day is barely above its minute: the day, which a
 * client at the minute's pace would spend in two minutes, until the minute is
 * spent and is what refuses.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, sleep, startServer, type Response, type ServerProcess } from './helpers.js';

const DAY_MS = 86_400_000;
/** Milliseconds since midnight in Tehran (+03:30 all year), the zone the windows follow. */
const intoTehranDay = (ms: number) => (ms + 3.5 * 3_600_000) % DAY_MS;

describe('rate-limit headers on consecutive answers', { timeout: 150_000 }, () => {
  const tmp = tempDir('nerkh-e2e-window-');
  const dataDir = join(tmp.path, 'data');
  const configPath = join(tmp.path, 'nerkh.config.json');
  const env = { NERKH_DATA_DIR: dataDir, NERKH_CONFIG: configPath };
  let server: ServerProcess;
  let key: string;

  before(async () => {
    assertBuilt();
    writeFileSync(configPath, JSON.stringify({ plans: { pacer: { services: ['catalogue', 'detail'], requests_per_minute: 30, requests_per_day: 40, refresh_interval_seconds: 1 } } }));
    // Only `serve` creates a store: make it as serve does, so the account and key exist before the server reads them.
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    await cliOk(cleanEnv(env), ['accounts', 'add', 'pacer-board', '--plan', 'pacer']);
    key = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', 'pacer-board', '--json'])).stdout) as { key: string }).key;
    server = await startServer(env);
  });

  after(async () => {
    await server?.kill();
    tmp.cleanup();
  });

  it('name the day on 20 answers in a row (30 a minute, 40 a day), then the minute once it is spent', async () => {
    // In the day's last minute nothing can spend the day, so the minute binds: start clear of it.
    if (intoTehranDay(Date.now()) > DAY_MS - 70_000) await sleep(DAY_MS - intoTehranDay(Date.now()) + 1000);
    // The thirty-one requests below in one minute window.
    if (Date.now() % 60_000 > 50_000) await sleep(60_000 - (Date.now() % 60_000) + 200);
    const paths = ['/v1/rates/usd_free', '/v1/rates?category=gold', '/v1/rates/eur_free,gold_18k', '/v1/rates'];
    const answers: { sentAt: number; response: Response }[] = [];
    for (let i = 0; i < 20; i++) {
      const sentAt = Date.now();
      answers.push({ sentAt, response: await get(server.base, paths[i % paths.length]!, key) });
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
      const response = await get(server.base, '/v1/rates/usd_free', key);
      assert.equal(response.headers.get('ratelimit'), `"day";r=${19 - i};t=${response.headers.get('x-ratelimit-reset')}`);
    }
    // The minute's thirtieth: nothing left of it, so it is the window that refuses next.
    const last = await get(server.base, '/v1/rates/usd_free', key);
    assert.equal(last.status, 200, last.text.slice(0, 200));
    assert.match(last.headers.get('ratelimit') ?? '', /^"minute";r=0;t=\d+$/);
    assert.equal(last.headers.get('x-ratelimit-limit'), '30');
    const refused = await get(server.base, '/v1/rates/usd_free', key);
    assert.equal(refused.status, 429, refused.text.slice(0, 200));
    assert.match(refused.headers.get('ratelimit') ?? '', /^"minute";r=0;t=\d+$/);
    assert.match(String((refused.json as { message?: string }).message), /minute limit of 30/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
  });
});
