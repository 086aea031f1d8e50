/**
 * Several real `nerkh serve` processes on one PostgreSQL database (created and
 * dropped here) and Redis (a random key prefix, removed after), fed by file
 * sources in a temp dir (docs/operations.md#several-nodes): one ingest leader, the same values on
 * every node, CLI key changes everywhere at once, one shared rate limit,
 * usage that adds up across nodes, a leader killed, Redis restarted, and
 * `--workers`.
 *
 * Needs `npm run build` first, NERKH_TEST_DATABASE_URL and NERKH_TEST_REDIS_URL.
 * Run alone: node --import tsx --test test/e2e/scale-out.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { eventually, writeSource } from '../support/env.js';
import { openStream, ratesOf, type SseStream } from '../stream/sse-client.js';
import { OwnRedis } from '../support/redis.js';
import { needs, REDIS_URL } from '../support/services.js';
import { Cluster, startNodes } from './cluster.js';
import { assertBuilt, cliOk, get, minuteStartClock, pollUntil, runCli, sleep, startServer, type ServerProcess } from './helpers.js';

/** Three references and their source keys in the bundled catalogue, at plausible levels. */
const ITEMS = { usd_free: ['ir_fx_free_usd', 1_000_000], coin_emami: ['ir_coin_emami', 1_000_000_000], gold_18k: ['ir_gold_18k_gram', 100_000_000] } as const;
const KEYS = Object.keys(ITEMS).join(',');
const DETAIL = `/v1/rates/${KEYS}`;

interface NodeRow {
  id: string;
  role: string;
  leader: boolean;
  version: number | null;
  last_seen: string;
}
interface Status {
  service: { state: string; message: string };
  nodes: NodeRow[];
  redis: { state: string } | null;
}
interface Detail {
  rates: { key: string; value: number; status: string; updated_at: string; day_open: number | null; day_high: number | null; day_low: number | null }[];
}

const services = needs('postgres', 'redis');
if (!services.skip) assertBuilt();

describe('several nodes on Redis and PostgreSQL', services, () => {
  // Every node's clock starts at the top of a minute (one shift for all, so they agree): the 60/min burst,
  // the file's first test, falls in one minute window without waiting for one. Sources are stamped on that clock.
  // The shift is chosen as the nodes start (before()); until then the file's clock is the wall clock.
  let clock: { now(): number } = { now: () => Date.now() };
  const shifted: Record<string, string> = {};
  const cluster = new Cluster('scale', shifted);
  const { dir, configPath, nodes } = cluster;
  const sourcePath = join(dir.path, 'alpha.json');
  let store: Store;
  /** Keys made straight in the store before the nodes start (the CLI is tested on its own). */
  const keys = { live: '', limited: '', metered: '' };
  const accountIds = { metered: '' };
  let generation = 0;

  const env = (name: string, redisUrl?: string, redisPrefix?: string) => cluster.env(name, redisUrl, redisPrefix);

  /** Write the source with every value moved to a new generation; returns the usd value written. */
  function rewrite(): number {
    generation++;
    writeSource(sourcePath, Object.fromEntries(Object.values(ITEMS).map(([sourceKey, level]) => [sourceKey, level + generation])), new Date(clock.now()));
    return ITEMS.usd_free[1] + generation;
  }

  const status = async (node: ServerProcess) => (await get(node.base, '/v1/status', keys.live)).json as Status;
  const usd = async (node: ServerProcess) => ((await get(node.base, DETAIL, keys.live)).json as Detail).rates.find((r) => r.key === 'usd_free')!.value;
  const metric = async (node: ServerProcess, name: string) => {
    const line = (await get(node.base, '/metrics')).text.split('\n').find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(' ')[1]) : NaN;
  };
  /** The node process whose id the status page shows as leader (ids carry the pid). */
  const leaderOf = (nodeRows: NodeRow[], among: ServerProcess[]) => {
    const leader = nodeRows.find((n) => n.leader)!;
    return among.find((node) => leader.id.includes(`-${node.child.pid}-`));
  };

  before(async () => {
    const databaseUrl = await cluster.createDatabase();
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 120, poll_seconds: 0.2 }],
        plans: {
          live: {
            services: ['catalogue', 'detail', 'status', 'usage', 'history', 'stream'],
            max_references: null,
            refresh_interval_seconds: 0,
            requests_per_minute: 1_000_000,
            requests_per_day: null,
            history_days: null,
            max_streams: 2,
          },
          limited: { services: ['detail'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 60, requests_per_day: null },
        },
      }),
    );
    rewrite();
    store = await Store.open({ databaseUrl, dataDir: dir.path });
    for (const [name, plan] of [['live', 'live'], ['limited', 'limited'], ['metered', 'live']] as const) {
      const account = await store.accounts.create(name, plan);
      keys[name] = (await store.keys.issue(account.id)).key;
      if (name === 'metered') accountIds.metered = account.id;
    }
    // The first node alone migrates nothing new (the store above did) but takes the lease; the others join it.
    const minuteStart = minuteStartClock();
    Object.assign(shifted, minuteStart.env);
    clock = minuteStart;
    await cluster.start('a', 'b', 'c');
  });

  after(async () => {
    await store?.close();
    await cluster.close();
  });

  it('a 60/min key hammered across the nodes gets 60 to 63 answers in its minute', async () => {
    // The nodes' clock started a minute just before they did: the whole burst falls in it.
    const minute = Math.floor(clock.now() / 60_000);
    let ok = 0;
    let refused = 0;
    let other = 0;
    const total = 180;
    let next = 0;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        while (next < total) {
          const i = next++;
          const response = await get(nodes[i % 3]!.base, '/v1/rates/usd_free', keys.limited);
          if (response.status === 200) ok++;
          else if (response.status === 429) refused++;
          else other++;
        }
      }),
    );
    assert.equal(other, 0);
    assert.equal(ok + refused, total);
    const inBurst = ok;
    // Quota one node holds unused moves to a node that ran out within about half a second (the limiter
    // asks again every 500 ms): a burst shorter than that may end an answer or two short. A client that
    // keeps asking through its minute gets them; one that never does would ask until 10 s before it ends.
    const askUntil = (minute + 1) * 60_000 - 10_000;
    for (let turn = 0; ok < 60 && clock.now() < askUntil; turn++) {
      await sleep(100);
      const response = await get(nodes[turn % 3]!.base, '/v1/rates/usd_free', keys.limited);
      if (response.status === 200) ok++;
      else if (response.status !== 429) other++;
    }
    assert.equal(Math.floor(clock.now() / 60_000), minute, 'the burst stayed inside one minute');
    assert.equal(other, 0);
    assert.ok(ok >= 60 && ok <= 63, `${ok} answered (${inBurst} in the burst; limit 60, 3 nodes: at most 63)`);
  });

  it('has exactly one ingest leader, and every node lists every node the same way', async () => {
    const { value } = await pollUntil(
      () => Promise.all(nodes.map(status)),
      (all) => all.every((s) => s.nodes.length === 3 && s.nodes.filter((n) => n.leader).length === 1 && s.redis?.state === 'active'),
      5000,
    );
    const leaders = new Set(value.map((s) => s.nodes.find((n) => n.leader)!.id));
    assert.equal(leaders.size, 1, 'every node names the same leader');
    assert.ok(leaderOf(value[0]!.nodes, nodes), 'the leader is one of the three processes');
    for (const s of value) assert.deepEqual(s.nodes.map((n) => n.role), ['all', 'all', 'all']);
    assert.equal(value[0]!.service.state, 'active', value[0]!.service.message);
  });

  it('shows a source rewrite with identical values on every node within 2 s', async () => {
    const written = Date.now();
    const expected = rewrite();
    const { value } = await pollUntil(
      () => Promise.all(nodes.map(async (node) => ((await get(node.base, DETAIL, keys.live)).json as Detail).rates)),
      (all) => all.every((rates) => rates.find((r) => r.key === 'usd_free')!.value === expected),
      2000,
      25,
    );
    assert.ok(Date.now() - written <= 2000, `identical on every node after ${Date.now() - written} ms`);
    assert.deepEqual(value[1], value[0]);
    assert.deepEqual(value[2], value[0]);
  });

  it('a key made with the CLI works on every node; revoked, it is refused everywhere', async (t) => {
    const cliEnv = { ...process.env, ...env('cli') };
    const issued = JSON.parse((await cliOk(cliEnv, ['keys', 'issue', 'live', '--json'])).stdout) as { id: string; key: string };
    const { ms } = await pollUntil(() => Promise.all(nodes.map((node) => get(node.base, DETAIL, issued.key))), (all) => all.every((r) => r.status === 200), 2000, 25, (all) => all.map((r) => r.status).join());
    t.diagnostic(`working everywhere after ${ms} ms`);
    await cliOk(cliEnv, ['keys', 'revoke', issued.id]);
    const revoked = await pollUntil(() => Promise.all(nodes.map((node) => get(node.base, DETAIL, issued.key))), (all) => all.every((r) => r.status === 401), 1000, 25, (all) => all.map((r) => r.status).join());
    t.diagnostic(`refused everywhere after ${revoked.ms} ms`);
  });

  it('streams follow the bus on every node, max_streams holds across nodes, and every node reads the history the leader records', async () => {
    const streams: SseStream[] = [];
    try {
      // Two streams (the plan's max) on two nodes; a third on the third node is refused.
      for (const node of [nodes[1]!, nodes[2]!]) streams.push(await openStream(node.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.live }));
      assert.deepEqual(streams.map((s) => s.status), [200, 200]);
      const third = await openStream(nodes[0]!.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.live });
      assert.equal(third.status, 429, third.body);
      assert.match(third.body, /TOO_MANY_STREAMS/);
      await Promise.all(streams.map((s) => s.event(0)));
      // A rewrite reaches the streams on both nodes, identical.
      const expected = rewrite();
      const changed = await Promise.all(streams.map((s) => eventually(() => s.events.slice(1).find((e) => ratesOf(e).rates[0]?.value === expected), 3000, 20)));
      assert.deepEqual(changed.map((e) => ratesOf(e!).rates[0]), [ratesOf(changed[0]!).rates[0], ratesOf(changed[0]!).rates[0]]);
      // A slot freed on one node is free on every node.
      streams.shift()!.close();
      const { value: reopened } = await pollUntil(
        async () => {
          const opened = await openStream(nodes[0]!.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.live });
          if (opened.status === 200) streams.push(opened);
          return opened.status;
        },
        (code) => code === 200,
        3000,
        100,
      );
      assert.equal(reopened, 200);
      // History: the leader records, the store holds it a second later, every node answers the same close.
      await pollUntil(
        () => Promise.all(nodes.map(async (node) => (await get(node.base, '/v1/rates/usd_free/history?interval=1m', keys.live)).json as { candles: { close: number }[] })),
        (all) => all.every((h) => h.candles.at(-1)?.close === expected),
        3000,
        100,
      );
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it('usage summed over the nodes equals the requests answered, also across a SIGTERM', async () => {
    let answered = 0;
    const burst = async (among: ServerProcess[], count: number) => {
      for (let i = 0; i < count; i++) {
        // Successes and errors alike are counted (an unknown key is a 404 against the key).
        const response = await get(among[i % among.length]!.base, i % 5 === 0 ? '/v1/rates/no_such_rate' : DETAIL, keys.metered);
        assert.ok(response.status === 200 || response.status === 404, `answered ${response.status}`);
        answered++;
      }
    };
    await burst(nodes, 90);
    // The last node goes (a follower unless it leads; either way its counts must land).
    const leaving = nodes.pop()!;
    const { exit } = await leaving.stop('SIGTERM');
    assert.equal(exit?.code, 0);
    await burst(nodes, 40);
    const { value } = await pollUntil(
      async () => {
        const { ok, errors } = await store.usage.total(accountIds.metered);
        return ok + errors;
      },
      (sum) => sum === answered,
      5000,
      200,
    );
    assert.equal(value, answered);
  });

  it('kill -9 of the leader: another node leads within 10 s, values keep moving, no version goes backwards', async () => {
    const survivors = [...nodes];
    const { value: before } = await pollUntil(() => status(survivors[0]!), (s) => s.nodes.length === 2 && leaderOf(s.nodes, survivors) !== undefined, 8000, 100);
    const leader = leaderOf(before.nodes, survivors)!;
    const follower = survivors.find((node) => node !== leader)!;
    const usdRate = async () => ((await get(follower.base, DETAIL, keys.live)).json as Detail).rates.find((r) => r.key === 'usd_free')!;
    const dayBefore = await usdRate();
    const versions: number[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        versions.push(await metric(follower, 'nerkh_snapshot_version'));
        await sleep(100);
      }
    })();
    const killedAt = Date.now();
    await leader.stop('SIGKILL');
    nodes.splice(nodes.indexOf(leader), 1);
    const moving = setInterval(() => rewrite(), 500);
    try {
      const taken = await pollUntil(() => status(follower), (s) => s.nodes.some((n) => n.leader && n.id.includes(`-${follower.child.pid}-`)), 10_000, 100);
      assert.ok(Date.now() - killedAt <= 10_000, `took over after ${Date.now() - killedAt} ms`);
      const seen = await usd(follower);
      await pollUntil(() => usd(follower), (value) => value > seen, 3000, 100);
      // The market day goes on where the dead leader left it: same open, the range only widening.
      const dayAfter = await usdRate();
      if (dayAfter.updated_at.slice(0, 10) === dayBefore.updated_at.slice(0, 10)) {
        assert.equal(dayAfter.day_open, dayBefore.day_open);
        assert.ok(dayAfter.day_high! >= dayBefore.day_high! && dayAfter.day_low! <= dayBefore.day_low!, JSON.stringify({ dayBefore, dayAfter }));
      }
      assert.ok(taken.value.nodes.length <= 2, `${taken.value.nodes.length} nodes listed`);
      // Its last heartbeat ages out of the list (5 s), as the lease did.
      await pollUntil(() => status(follower), (s) => s.nodes.length === 1, 6000, 200);
    } finally {
      clearInterval(moving);
      watching = false;
      await watcher;
    }
    // The lease runs out about 5 s after the kill and the move above can come just before the checks end,
    // between two of the watcher's looks: one more look sees the version of the values it saw move.
    versions.push(await metric(follower, 'nerkh_snapshot_version'));
    assert.ok(versions.length > 10, `${versions.length} versions seen`);
    for (let i = 1; i < versions.length; i++) assert.ok(versions[i]! >= versions[i - 1]!, `version went from ${versions[i - 1]} to ${versions[i]}`);
    assert.ok(versions.at(-1)! > versions[0]!, `versions did not move: ${versions.join(', ')}`);
  });

  it('Redis restarted under two nodes: no 5xx, honest ages and status degraded meanwhile, everything resumes by itself', async () => {
    // A pair of its own: its own Redis (stopped and started here), and a source of its own with a short max age.
    const redis = await OwnRedis.create();
    await redis.start();
    const pairSource = join(dir.path, 'pair.json');
    const pairConfig = join(dir.path, 'pair.config.json');
    writeFileSync(
      pairConfig,
      JSON.stringify({
        sources: [{ name: 'alpha', type: 'file', path: pairSource, max_age_seconds: 3, poll_seconds: 0.2 }],
        plans: {
          live: { services: ['detail', 'status'], refresh_interval_seconds: 0, max_references: null, requests_per_minute: 1_000_000, requests_per_day: null },
          limited: { services: ['detail'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 60, requests_per_day: null },
        },
      }),
    );
    // The pair's clock starts a minute of its own as they start: the burst while Redis is away falls in one window.
    const pairClock = minuteStartClock();
    const writePair = (usdValue: number) => writeSource(pairSource, { [ITEMS.usd_free[0]]: usdValue, [ITEMS.coin_emami[0]]: ITEMS.coin_emami[1], [ITEMS.gold_18k[0]]: ITEMS.gold_18k[1] }, new Date(pairClock.now()));
    const pairEnv = (name: string) => ({ ...env(name, redis.url, 'nerkh-test:'), NERKH_CONFIG: pairConfig, ...pairClock.env });
    const usdRate = async (node: ServerProcess) => ((await get(node.base, '/v1/rates/usd_free', keys.live)).json as Detail).rates[0]!;
    const pair: ServerProcess[] = [];
    // The background traffic stops in `finally` too, so a failed check never leaves it running (and the run hanging).
    let running = true;
    try {
      writePair(1_000_100);
      await startNodes(pair, pairEnv, ['r1', 'r2']);
      writePair(1_000_200);
      await pollUntil(() => Promise.all(pair.map(usdRate)), (rates) => rates.every((r) => r.value === 1_000_200 && r.status === 'ok'), 3000);
      // Each node's share while Redis is away comes from the last node list it saw: both must have seen both.
      await pollUntil(() => Promise.all(pair.map(status)), (all) => all.every((s) => s.nodes.length === 2), 10_000, 200);
      const statuses = new Map<number, number>();
      let degraded = false;
      const traffic = (async () => {
        for (let i = 0; running; i++) {
          const response = await get(pair[i % 2]!.base, i % 4 === 0 ? '/v1/status' : DETAIL, keys.live).catch(() => null);
          const code = response?.status ?? 0;
          statuses.set(code, (statuses.get(code) ?? 0) + 1);
          const body = response?.json as Status | undefined;
          if (i % 4 === 0 && body?.redis?.state === 'down' && body.service.state === 'degraded') degraded = true;
          await sleep(20);
        }
      })();
      await redis.stop();
      // Nothing new can come; the value outlives its 3 s max age on both nodes, and they say so.
      const { value: aged } = await pollUntil(() => Promise.all(pair.map(usdRate)), (rates) => rates.every((r) => r.status === 'stale' && r.value === 1_000_200), 8000, 200);
      for (const rate of aged) assert.ok((rate as { stale_seconds?: number }).stale_seconds! >= 3, JSON.stringify(rate));
      // Limits fall back to each node's share: 60/min over two nodes is 30 a node, answered at once.
      const minute = Math.floor(pairClock.now() / 60_000);
      const limited = await Promise.all(Array.from({ length: 100 }, (_, i) => get(pair[i % 2]!.base, '/v1/rates/usd_free', keys.limited)));
      const admitted = limited.filter((r) => r.status === 200).length;
      assert.deepEqual(new Set(limited.map((r) => r.status)), new Set([200, 429]));
      assert.equal(Math.floor(pairClock.now() / 60_000), minute, 'the burst stayed inside one minute');
      assert.ok(admitted >= 60 && admitted <= 62, `${admitted} admitted while Redis was away (60/min, 2 nodes)`);
      await redis.start();
      // Back by itself: Redis seen again, one leader, and a new value on both nodes.
      await pollUntil(() => Promise.all(pair.map(status)), (all) => all.every((s) => s.redis?.state === 'active' && s.nodes.length === 2 && s.nodes.filter((n) => n.leader).length === 1), 10_000, 200);
      writePair(1_000_300);
      await pollUntil(() => Promise.all(pair.map(usdRate)), (rates) => rates.every((r) => r.value === 1_000_300 && r.status === 'ok'), 5000, 100);
      running = false;
      await traffic;
      const fivexx = [...statuses].filter(([code]) => code === 0 || code >= 500);
      assert.deepEqual(fivexx, [], `answers by status: ${JSON.stringify([...statuses])}`);
      assert.ok(degraded, 'the status said degraded, Redis down, while it was away');
    } finally {
      running = false;
      await Promise.all(pair.map((node) => node.kill()));
      await redis.stop();
    }
  });

  it('--workers 2 and a role apart need Redis: without it, one line on stderr and exit 2', async () => {
    for (const [args, named] of [[['--workers', '2'], '--workers'], [['--role', 'api'], '--role api']] as const) {
      const result = await runCli({ ...process.env, ...env('w0'), NERKH_REDIS_URL: '' }, ['serve', ...args]);
      assert.equal(result.code, 2);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.ok(lines[0]!.startsWith(`nerkh: ${named} needs NERKH_REDIS_URL`), lines[0]);
    }
  });

  it('--workers 2 with Redis: two worker nodes serve one port, a dead worker is replaced, and SIGTERM stops both', async () => {
    const workersPrefix = cluster.newPrefix();
    const server = await startServer({ ...env('w', REDIS_URL!, workersPrefix), NERKH_LOG_LEVEL: 'info' }, { args: ['--workers', '2'] });
    try {
      // The second worker starts once the first listens.
      await pollUntil(async () => server.stdout.match(/nerkh listening on/g)?.length ?? 0, (count) => count === 2, 15_000, 100);
      const { value } = await pollUntil(() => status(server), (s) => s?.nodes?.length === 2 && s.nodes.filter((n) => n.leader).length === 1, 5000, 200);
      assert.equal(value.nodes.filter((n) => n.role === 'all').length, 2);
      assert.equal((await get(server.base, DETAIL, keys.live)).status, 200);
      // A worker that dies is replaced.
      const victim = value.nodes.find((n) => !n.leader)!;
      process.kill(Number(victim.id.split('-').at(-2)), 'SIGKILL');
      await pollUntil(() => status(server).catch(() => null), (s) => s?.nodes.length === 2 && !s.nodes.some((n) => n.id === victim.id), 15_000, 200);
      assert.match(server.stderr, /worker \d+ ended \(SIGKILL\); starting another/);
      await pollUntil(async () => server.stdout.match(/nerkh listening on/g)?.length ?? 0, (count) => count === 3, 10_000, 100);
      const { exit } = await server.stop('SIGTERM', 15_000);
      assert.equal(exit?.code, 0, server.output());
      assert.equal(server.stdout.match(/nerkh: stopped/g)?.length, 2, server.output());
    } finally {
      await server.kill();
    }
  });
});
