/**
 * A manual price on two real `nerkh serve` nodes sharing PostgreSQL (a
 * database created and dropped here) and Redis (a random key prefix, removed
 * after): `nerkh prices set` in a third process, and the price served by
 * both nodes, the leader and the one that only serves, within 2 s; cleared,
 * both fall back to the derived value within 2 s.
 *
 * Needs `npm run build` first, NERKH_TEST_DATABASE_URL and NERKH_TEST_REDIS_URL.
 * Run alone: node --import tsx --test test/e2e/manual-scale-out.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Big from 'big.js';
import { writeSource } from '../support/env.js';
import { needs } from '../support/services.js';
import { Cluster } from './cluster.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil } from './helpers.js';

const LIVE_PLAN = { services: ['detail', 'status'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };

interface Rate {
  value: number | null;
  status: string;
  source: string | null;
}
interface Status {
  nodes: { id: string; leader: boolean }[];
  redis: { state: string } | null;
  sources: { name: string; type: string; state: string; derived?: { references: number; computed: number; stale_inputs: string[]; missing_inputs: string[] } }[];
}

const services = needs('postgres', 'redis');
if (!services.skip) assertBuilt();

describe('a manual price on two nodes (PostgreSQL and Redis)', services, () => {
  const cluster = new Cluster('manual');
  const { nodes } = cluster;
  const worldPath = join(cluster.dir.path, 'world.json');
  const derivedValue = new Big('2650.75').times('1000100').div('31.1034768').times('0.75').round(0, Big.roundHalfEven).toNumber();
  let key = '';

  const cli = () => cleanEnv(cluster.env('cli'));
  const gold = () => Promise.all(nodes.map(async (node) => ((await get(node.base, '/v1/rates/gold_18k', key)).json as { rates: Rate[] }).rates[0]!));
  const show = (rates: Rate[]) => JSON.stringify(rates);

  before(async () => {
    await cluster.createDatabase();
    writeSource(worldPath, { intl_xau_usd_spot: 2650.75, ir_fx_free_usd: 1_000_100 });
    writeFileSync(
      cluster.configPath,
      JSON.stringify({
        sources: [
          { name: 'world', type: 'file', path: worldPath, max_age_seconds: 600, poll_seconds: 0.2 },
          { name: 'desk', type: 'manual' },
        ],
        derived: { gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75' },
        plans: { live: LIVE_PLAN },
      }),
    );
    // The first node creates the schema and takes the lease; the second joins it.
    await cluster.start('a', 'b');
    await cliOk(cli(), ['accounts', 'add', 'desk-reader', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli(), ['keys', 'issue', 'desk-reader', '--json'])).stdout) as { key: string }).key;
    await pollUntil(gold, (rates) => rates.every((rate) => rate?.source === 'derived'), 10_000, 100, show);
  });

  after(() => cluster.close());

  it('has one leader, so one node serves what it does not read itself', async () => {
    const { value } = await pollUntil(
      () => Promise.all(nodes.map(async (node) => (await get(node.base, '/v1/status', key)).json as Status)),
      (all) => all.every((s) => s.nodes.length === 2 && s.nodes.filter((n) => n.leader).length === 1 && s.redis?.state === 'active'),
      5000,
    );
    assert.equal(new Set(value.map((s) => s.nodes.find((n) => n.leader)!.id)).size, 1);
    // The node that does not lead lists the sources as the leader shares them, and works out the derived source from the snapshot it serves: the same on both.
    for (const s of value) {
      assert.deepEqual(
        s.sources.map((source) => [source.name, source.type, source.state, source.derived ?? null]),
        [
          ['world', 'file', 'active', null],
          ['desk', 'manual', 'active', null],
          ['derived', 'derived', 'active', { references: 1, computed: 1, stale_inputs: [], missing_inputs: [] }],
        ],
      );
    }
  });

  it('serves a price set with `nerkh prices set` on both nodes within 2 s, and a new one likewise', async (t) => {
    for (const value of ['64500000', '64512345.5']) {
      const set = await cliOk(cli(), ['prices', 'set', 'gold_18k', value, '--note', 'two nodes']);
      assert.equal(set.stderr, '', 'the change notice was sent');
      const done = Date.now();
      const { value: rates } = await pollUntil(gold, (all) => all.every((rate) => rate.source === 'desk' && rate.value === Number(value)), 4000, 25, show);
      const ms = Date.now() - done;
      t.diagnostic(`${value}: on both nodes ${ms} ms after \`prices set\` returned`);
      assert.deepEqual(rates[1], rates[0]);
      assert.equal(rates[0]!.status, 'ok');
    }
  });

  it('falls back to the derived value on both nodes within 2 s of `nerkh prices clear`', async (t) => {
    await cliOk(cli(), ['prices', 'clear', 'gold_18k']);
    const done = Date.now();
    await pollUntil(gold, (all) => all.every((rate) => rate.source === 'derived' && rate.value === derivedValue && rate.status === 'ok'), 4000, 25, show);
    t.diagnostic(`derived on both nodes ${Date.now() - done} ms after \`prices clear\` returned`);
    assert.ok(Date.now() - done <= 2000, `after ${Date.now() - done} ms`);
    const log = JSON.parse((await cliOk(cli(), ['prices', 'log', '--json'])).stdout) as { action: string; value: string | null }[];
    assert.deepEqual(
      log.map((entry) => [entry.action, entry.value]),
      [
        ['clear', null],
        ['set', '64512345.5'],
        ['set', '64500000'],
      ],
    );
  });
});
