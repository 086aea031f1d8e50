/**
 * A manual source end to end, one real `nerkh serve` on SQLite with no Redis,
 * and the real `nerkh prices` commands in other processes: a price set is
 * served within 2 s to the digit, an expired one stops being fresh, a clear
 * hands the reference back, list and log show what happened, and bad input
 * is one clear line.
 *
 * Needs `npm run build` first. Run alone: node --import tsx --test test/e2e/manual-prices.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeSource } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, runCliEach, get, pollUntil, runCli, startServer, type ServerProcess } from './helpers.js';

interface Rate {
  key: string;
  value: number | null;
  status: string;
  source: string | null;
  updated_at: string | null;
}
interface ListRow {
  source: string;
  reference: string;
  value: string;
  state: string;
  set_at: string;
  expires_at: string | null;
  note: string | null;
}
interface LogRow {
  at: string;
  source: string;
  reference: string;
  action: string;
  value: string | null;
  expires_at: string | null;
  note: string | null;
}

const LIVE_PLAN = { services: ['detail', 'status'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 100_000, requests_per_day: null };
/** More digits than a double keeps, inside gold_18k's band. */
const EXACT = '98765432109.125';

describe('e2e: a manual source set with `nerkh prices`, one server on SQLite', () => {
  const dir = tempDir('nerkh-e2e-manual-');
  const feedPath = join(dir.path, 'feed.json');
  const configPath = join(dir.path, 'nerkh.config.json');
  const env = { NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_LOG_LEVEL: 'warn' };
  const cli = cleanEnv(env);
  let server: ServerProcess | null = null;
  let key = '';

  const rate = async (name: string): Promise<Rate> => {
    const response = await get(server!.base, `/v1/rates/${name}`, key);
    assert.equal(response.status, 200, response.text);
    return (response.json as { rates: Rate[] }).rates[0]!;
  };
  const rateText = async (name: string) => (await get(server!.base, `/v1/rates/${name}`, key)).text;

  before(async () => {
    assertBuilt();
    // The feed has usd_free only: gold_18k comes from the desk or nowhere.
    writeSource(feedPath, { ir_fx_free_usd: 1_000_000 });
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [
          { name: 'feed', type: 'file', path: feedPath, max_age_seconds: 600, poll_seconds: 0.2 },
          { name: 'desk', type: 'manual' },
        ],
        plans: { live: LIVE_PLAN },
      }),
    );
    server = await startServer(env);
    await cliOk(cli, ['accounts', 'add', 'desk-reader', '--plan', 'live']);
    key = (JSON.parse((await cliOk(cli, ['keys', 'issue', 'desk-reader', '--json'])).stdout) as { key: string }).key;
    await pollUntil(() => get(server!.base, '/v1/rates/usd_free', key), (r) => r.status === 200, 5000);
  });

  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('serves a price set by hand within 2 s, to the digit, from the desk', async (t) => {
    assert.equal((await rate('gold_18k')).status, 'unavailable');
    const set = await cliOk(cli, ['prices', 'set', '18ayar', EXACT, '--note', 'phoned in by the bazaar']);
    const setAt = Date.now();
    assert.match(set.stdout, /^desk: gold_18k set to 98765432109\.125 IRR per gram, with no expiry\n$/);
    const { ms } = await pollUntil(() => rateText('gold_18k'), (text) => text.includes(`"value":${EXACT},`), 5000, 50);
    t.diagnostic(`the price was served ${Date.now() - setAt} ms after \`prices set\` returned (poll took ${ms} ms)`);
    assert.ok(Date.now() - setAt <= 2000, `served after ${Date.now() - setAt} ms (limit 2000)`);
    const served = await rate('gold_18k');
    assert.deepEqual([served.status, served.source], ['ok', 'desk']);
    // The desk is a source like any other on the status page.
    const status = (await get(server!.base, '/v1/status', key)).json as { sources: { name: string; state: string }[] };
    assert.deepEqual(
      status.sources.map((s) => [s.name, s.state]),
      [
        ['feed', 'active'],
        ['desk', 'active'],
      ],
    );
  });

  it('leaves a reference the feed serves fresh to the feed (priority is the config order)', async () => {
    // Written as people write prices: grouped in threes.
    await cliOk(cli, ['prices', 'set', 'usd', '1,000,500']);
    const list = JSON.parse((await cliOk(cli, ['prices', 'list', '--json'])).stdout) as ListRow[];
    assert.deepEqual(
      list.map((row) => [row.reference, row.value]),
      [
        ['gold_18k', EXACT],
        ['usd_free', '1000500'],
      ],
    );
    // Once the server holds the desk's price (a candidate behind the feed), the feed is still the one served.
    await pollUntil(
      () => get(server!.base, '/v1/rates/usd_free?expand=sources', key),
      (r) => (r.json as { rates?: { sources?: { name: string; value: number | null }[] }[] }).rates?.[0]?.sources?.some((s) => s.name === 'desk' && s.value === 1_000_500) === true,
      5000,
      50,
      (r) => r.text.slice(0, 600),
    );
    const usd = await rate('usd_free');
    assert.deepEqual([usd.source, usd.value], ['feed', 1_000_000]);
  });

  it('stops serving an expired price as fresh: stale after its expiry', async () => {
    // Far enough ahead that a command slowed by a busy machine still sets it before it passes.
    const expiry = new Date(Date.now() + 8000);
    await cliOk(cli, ['prices', 'set', 'gold_18k', '98765432110', '--expires', expiry.toISOString()]);
    const { value: fresh } = await pollUntil(() => rate('gold_18k'), (r) => r.value === 98765432110, 3000);
    if (Date.now() < expiry.getTime() - 500) assert.equal(fresh.status, 'ok', 'fresh before its expiry');
    const { value: stale } = await pollUntil(() => rate('gold_18k'), (r) => r.status === 'stale', 6000, 100);
    assert.ok(Date.now() >= expiry.getTime(), 'stale before its expiry');
    assert.deepEqual([stale.source, stale.value], ['desk', 98765432110]);
    const list = JSON.parse((await cliOk(cli, ['prices', 'list', '--json'])).stdout) as ListRow[];
    assert.equal(list.find((row) => row.reference === 'gold_18k')?.state, 'expired');
  });

  it('clears a price: the feed serves the reference again, and the log shows every change, newest first', async () => {
    // Persian digits, as a price is often typed.
    await cliOk(cli, ['prices', 'set', 'usd_free', '۱۰۰۰۶۰۰', '--expires', '2h', '--note', 'feed lagging']);
    const cleared = await cliOk(cli, ['prices', 'clear', 'usd', '--note', 'feed is fine']);
    assert.equal(cleared.stdout, 'desk: usd_free cleared\n');
    assert.equal((await cliOk(cli, ['prices', 'clear', 'usd'])).stdout, 'desk: usd_free had no price; nothing changed\n');
    assert.equal((await rate('usd_free')).source, 'feed');

    const log = JSON.parse((await cliOk(cli, ['prices', 'log', '--reference', 'dollar', '--json'])).stdout) as LogRow[];
    assert.deepEqual(
      log.map((row) => [row.source, row.reference, row.action, row.value, row.note]),
      [
        ['desk', 'usd_free', 'clear', null, 'feed is fine'],
        ['desk', 'usd_free', 'set', '1000600', 'feed lagging'],
        ['desk', 'usd_free', 'set', '1000500', null],
      ],
    );
    // Expiry two hours on, in the configured zone (Asia/Tehran).
    const expires = Date.parse(log[1]!.expires_at!);
    assert.ok(Math.abs(expires - (Date.parse(log[1]!.at) + 7_200_000)) < 2000, JSON.stringify(log[1]));
    assert.match(log[1]!.at, /\+03:30$/);

    const table = (await cliOk(cli, ['prices', 'log'])).stdout.split('\n');
    assert.match(table[0]!, /^at\s+source\s+reference\s+action\s+value\s+expires_at\s+note$/);
    assert.equal(table.filter((line) => /\sdesk\s/.test(line)).length, 5);
    assert.match(table.find((line) => line.includes('phoned in'))!, /desk\s+gold_18k\s+set\s+98765432109\.125\s+-\s+phoned in by the bazaar$/);

    const list = (await cliOk(cli, ['prices', 'list'])).stdout.split('\n');
    assert.match(list[0]!, /^source\s+reference\s+value\s+state\s+set_at\s+expires_at\s+note$/);
    assert.match(list[1]!, /^desk\s+gold_18k\s+98765432110\s+expired\s/);
    assert.equal(list[2], '');
  });

  it('refuses bad input with one line and changes nothing', async () => {
    const before = (await cliOk(cli, ['prices', 'log', '--json'])).stdout;
    const cases: [string[], RegExp][] = [
      [['prices', 'set', 'gold_18k', 'abc'], /^nerkh: invalid value "abc": value is not a number; write a decimal number above zero, such as 1125050000, 1,125,050,000/],
      [['prices', 'set', 'gold_18k', '0'], /^nerkh: invalid value "0": a price must be above zero/],
      [['prices', 'set', 'gold_18k', '-5'], /^nerkh: invalid value "-5": a price must be above zero/],
      [['prices', 'set', 'gold_18k', '1e9'], /^nerkh: invalid value "1e9": value is not a number/],
      [['prices', 'set', 'gold_18k', '1,00,000,000'], /^nerkh: invalid value "1,00,000,000": digit grouping is not in threes/],
      [['prices', 'set', 'gold_18k', '۱۲3000000'], /^nerkh: invalid value "۱۲3000000": value mixes digit systems/],
      [['prices', 'set', 'gold_18k', '5'], /^nerkh: value 5 is outside the plausible range of gold_18k \(1000000 to 100000000000 IRR per gram\)/],
      [['prices', 'set', 'gold_18kk', '100000000'], /^nerkh: unknown reference "gold_18kk"/],
      [['prices', 'set', 'gold_18k', '100000000', '--expires', 'soon'], /^nerkh: invalid --expires "soon"/],
      [['prices', 'set', 'gold_18k', '100000000', '--source', 'feed'], /^nerkh: no manual source "feed" in the config \(manual sources: desk\)/],
      [['prices', 'log', '--limit', '0'], /^nerkh: invalid --limit "0"/],
    ];
    const results = await runCliEach(cli, cases.map(([args]) => args));
    for (const [index, [args, pattern]] of cases.entries()) {
      const result = results[index]!;
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, pattern, args.join(' '));
      assert.equal(result.stderr.split('\n').length, 2, `${args.join(' ')}: not one line: ${result.stderr}`);
      assert.equal(result.stdout, '');
    }
    assert.equal((await cliOk(cli, ['prices', 'log', '--json'])).stdout, before);

    // Another config on the same store: none or several manual sources.
    const none = join(dir.path, 'none.json');
    writeFileSync(none, JSON.stringify({ sources: [{ name: 'feed', type: 'file', path: feedPath }] }));
    const noManual = await runCli(cleanEnv({ ...env, NERKH_CONFIG: none }), ['prices', 'set', 'gold_18k', '100000000']);
    assert.match(noManual.stderr, /^nerkh: the config has no manual source; add \{"name": "desk", "type": "manual"\} to its sources/);
    const several = join(dir.path, 'several.json');
    writeFileSync(several, JSON.stringify({ sources: [{ name: 'desk', type: 'manual' }, { name: 'night', type: 'manual' }] }));
    const ambiguous = await runCli(cleanEnv({ ...env, NERKH_CONFIG: several }), ['prices', 'clear', 'gold_18k']);
    assert.match(ambiguous.stderr, /^nerkh: the config has several manual sources \(desk, night\): name one with --source/);
    const named = await cliOk(cleanEnv({ ...env, NERKH_CONFIG: several }), ['prices', 'list', '--source', 'night']);
    assert.equal(named.stdout, '(none)\n');
  });
});
