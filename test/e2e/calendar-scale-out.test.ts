/**
 * The market calendar on two real `nerkh serve` nodes sharing PostgreSQL (a
 * database created and dropped here) and Redis (a random key prefix):
 * `nerkh calendar close` in a third process reaches both nodes within 2 s,
 * the leader and the one that only serves; a price older than its max age
 * stays `ok` while its market is closed, and is `stale` once an operator
 * opens the market again. The nodes keep no weekly or holiday closures here
 * (NERKH_MARKET_CALENDAR=off, as every spawned test server): only what the
 * operator declares closes the market, so nothing depends on the day the
 * suite runs.
 *
 * Needs `npm run build` first, NERKH_TEST_DATABASE_URL and NERKH_TEST_REDIS_URL.
 * Run alone: node --import tsx --test test/e2e/calendar-scale-out.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ZoneTime } from '../../src/domain/time.js';
import { writeSource } from '../support/env.js';
import { needs } from '../support/services.js';
import { Cluster } from './cluster.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil } from './helpers.js';

const LIVE_PLAN = { services: ['catalogue', 'detail', 'status'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };
const MAX_AGE_SECONDS = 3;
const REASON = 'Bazaar closed: two-node test';

interface Rate {
  value: number | null;
  status: string;
  updated_at: string | null;
  market: { name: string; state: string; reason: string | null; reason_fa: string | null; opens_at: string | null } | null;
}

const services = needs('postgres', 'redis');
if (!services.skip) assertBuilt();

describe('market calendar on two nodes (PostgreSQL and Redis)', services, () => {
  const cluster = new Cluster('calendar');
  const { nodes } = cluster;
  const worldPath = join(cluster.dir.path, 'world.json');
  const tehran = new ZoneTime('Asia/Tehran');
  // Today and tomorrow in Tehran: a run that crosses midnight still finds the market closed.
  const today = tehran.day(Date.now());
  const tomorrow = tehran.day(Date.now() + 86_400_000);
  let key = '';

  const cli = () => cleanEnv(cluster.env('cli'));
  const usd = () => Promise.all(nodes.map(async (node) => ((await get(node.base, '/v1/rates/usd_free', key)).json as { rates: Rate[] }).rates[0]!));
  const show = (rates: Rate[]) => JSON.stringify(rates);

  before(async () => {
    await cluster.createDatabase();
    writeSource(worldPath, { ir_fx_free_usd: 1_000_100 });
    writeFileSync(
      cluster.configPath,
      JSON.stringify({ sources: [{ name: 'world', type: 'file', path: worldPath, max_age_seconds: MAX_AGE_SECONDS, poll_seconds: 0.2 }], plans: { live: LIVE_PLAN } }),
    );
    await cluster.start('a', 'b');
    await cliOk(cli(), ['accounts', 'add', 'bazaar-watcher', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli(), ['keys', 'issue', 'bazaar-watcher', '--json'])).stdout) as { key: string }).key;
    await pollUntil(usd, (rates) => rates.every((rate) => rate?.value === 1_000_100 && rate.market?.name === 'tehran'), 10_000, 100, show);
  });

  after(() => cluster.close());

  it('applies `nerkh calendar close` on both nodes within 2 s; a price past its max age stays ok while closed', async (t) => {
    // A fresh value, then the closure at once (well inside its 3 s of max age).
    writeSource(worldPath, { ir_fx_free_usd: 1_000_200 });
    await pollUntil(usd, (rates) => rates.every((rate) => rate.value === 1_000_200 && rate.status === 'ok'), 5000, 25, show);
    const closed = await cliOk(cli(), ['calendar', 'close', 'tehran', `${today}..${tomorrow}`, '--reason', REASON]);
    assert.equal(closed.stderr, '', 'the change notice was sent');
    const done = Date.now();
    const { value: rates } = await pollUntil(usd, (all) => all.every((rate) => rate.market?.state === 'closed' && rate.market.reason === REASON), 4000, 25, show);
    const ms = Date.now() - done;
    t.diagnostic(`closed on both nodes ${ms} ms after \`calendar close\` returned`);
    assert.ok(ms <= 2000, `after ${ms} ms`);
    assert.equal(rates[0]!.market!.opens_at, rates[1]!.market!.opens_at);
    // Wait for the value to be older than its max age by the wall clock: still ok on both nodes, its market closed.
    const { value: old } = await pollUntil(usd, (all) => all.every((rate) => Date.now() - Date.parse(rate.updated_at!) > (MAX_AGE_SECONDS + 1) * 1000), 10_000, 100, show);
    for (const rate of old) {
      assert.equal(rate.status, 'ok', show(old));
      assert.equal(rate.market?.state, 'closed');
    }
    // Every node lists the declared days in /v1/calendar.
    for (const node of nodes) {
      const listed = (await get(node.base, `/v1/calendar?market=tehran&from=${today}&to=${tomorrow}`, key)).json as { closed: { date: string; reason: string }[] };
      assert.deepEqual(listed.closed, [
        { date: today, date_jalali: tehran.jalaliDate(tehran.localToEpoch(...(today.split('-').map(Number) as [number, number, number]), 12)), reason: REASON, reason_fa: REASON },
        { date: tomorrow, date_jalali: tehran.jalaliDate(tehran.localToEpoch(...(tomorrow.split('-').map(Number) as [number, number, number]), 12)), reason: REASON, reason_fa: REASON },
      ]);
    }
    const list = JSON.parse((await cliOk(cli(), ['calendar', 'list', '--market', 'tehran', '--from', today, '--to', tomorrow, '--json'])).stdout) as { date: string; state: string; declared: string }[];
    assert.deepEqual(
      list.map((row) => [row.date, row.state, row.declared]),
      [
        [today, 'closed', 'close'],
        [tomorrow, 'closed', 'close'],
      ],
    );
  });

  it('turns the old price stale on both nodes within 2 s of `nerkh calendar open`', async (t) => {
    await cliOk(cli(), ['calendar', 'open', 'tehran', `${today}..${tomorrow}`]);
    const done = Date.now();
    await pollUntil(usd, (all) => all.every((rate) => rate.market?.state === 'open' && rate.status === 'stale'), 4000, 25, show);
    const ms = Date.now() - done;
    t.diagnostic(`open and stale on both nodes ${ms} ms after \`calendar open\` returned`);
    assert.ok(ms <= 2000, `after ${ms} ms`);
  });
});
