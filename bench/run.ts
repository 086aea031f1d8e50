/**
 * `npm run bench`: the real `nerkh serve` process against two bare node:http
 * servers returning the same body, in alternating rounds, with wrk (or
 * autocannon when wrk is not installed): (a) writing only content-type and
 * content-length, (b) writing the detail response's own headers as a flat
 * list. With Redis (BENCH_REDIS_URL, else NERKH_TEST_REDIS_URL) a second
 * `nerkh serve` runs on Redis beside it, measured in the same rounds. Prints
 * one table and writes bench/results/latest.json. Never part of `npm test`.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { measure, type Measurement } from './load.js';
import { dropSchema, getOnce, HISTORY_REFERENCES, measureRanges, metric, postgresBytes, randomRanges, seedHistory, type RangeMeasurement, type SeedResult } from './history.js';
import { BIN, cpuTime, freePort, median, memory, resetPeak, ROOT, SERVE_FLAGS, startChild, startServer, writeSources } from './processes.js';
import { popularRanges, type PopularFigures } from './history-popular.js';
import { streamBeforeAfter } from './stream-before.js';
import { streamBench } from './stream.js';
import { removePrefix } from '../test/support/redis.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 10_000);
/** `BENCH_HISTORY=0` leaves the history part out (no seeded year, no range queries, no recording cost). */
const HISTORY = process.env.BENCH_HISTORY !== '0';
/** A PostgreSQL database for the size of a reference-year there (one reference seeded in a schema of its own, then dropped). */
const HISTORY_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? null;
/** How long the demo server's recording is watched. */
const RECORD_SECONDS = Number(process.env.BENCH_RECORD_SECONDS ?? 30);
const REDIS_URL = process.env.BENCH_REDIS_URL || process.env.NERKH_TEST_REDIS_URL || null;
/**
 * A built checkout of an earlier version (`npm ci` done in it), run beside this
 * one on a copy of the same store and the same sources, so before and after are
 * measured in the same rounds on the same machine.
 */
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : null;
/** With BENCH_BEFORE: `BENCH_BEFORE_ONLY=1` loads only the baselines and the targets compared with the earlier build, so more rounds fit. */
const BEFORE_ONLY = BEFORE !== null && process.env.BENCH_BEFORE_ONLY === '1';
/** Each earlier-build target and the target of this build it is compared with. */
const BEFORE_TWINS: Record<string, string> = {
  'before: detail, 10 keys': 'detail, 10 keys',
  'before: catalogue, gzip asked': 'catalogue, gzip',
  'before: webservice feed, gzip asked': 'webservice feed, gzip',
};
const DETAIL_KEYS = ['usd_free', 'eur_free', 'coin_emami', 'gold_18k', 'gold_ounce', 'coin_bahar', 'coin_half', 'coin_quarter', 'gold_mithqal', 'usdt_irr'];
/** The same ten references by their navasan names (data/compat/navasan.json), for navasan's /latest/ against detail. */
const NAVASAN_ITEMS = ['usd', 'eur', 'sekkeh', '18ayar', 'ons', 'bahar', 'nim', 'rob', 'mesghal', 'usdt'];
/** `BENCH_COMPAT_ONLY=1` loads only the baselines, detail and navasan's /latest/ (the drop-in route's figure, in fewer minutes). */
const COMPAT_ONLY = process.env.BENCH_COMPAT_ONLY === '1';

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The process answering it, whose memory is read around each round. */
  pid: number;
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'nerkh-bench-'));
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = () => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  };
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const env = benchEnvironment(work, await freePort());
    writeSources(work);
    // An earlier build cannot open a store this one has migrated further: with BENCH_BEFORE the accounts are
    // seeded by the earlier build (its store code and CLI), its copy is taken, and this build migrates the original forward.
    const seeder = BEFORE ?? ROOT;
    const cli = (...args: string[]) => execFileSync(process.execPath, [join(seeder, 'bin', 'nerkh.js'), ...args], { env, encoding: 'utf8' });
    // Seeding opens (and so creates) the store; the admin commands refuse to create one.
    const seeded = await seedAccounts(env, ACCOUNTS, BEFORE ? pathToFileURL(join(BEFORE, 'dist', 'store', 'store.js')).href : '../src/store/store.js');
    cli('accounts', 'add', 'bench', '--plan', 'bench');
    const { key } = JSON.parse(cli('keys', 'issue', 'bench', '--json')) as { key: string };
    // The earlier version gets a copy of the seeded store, so neither writes to the other's.
    if (BEFORE) cpSync(env.NERKH_DATA_DIR!, join(work, 'data-before'), { recursive: true });
    let seed: SeedResult | null = null;
    if (HISTORY) {
      seed = await seedHistory(env.NERKH_DATA_DIR!, HISTORY_REFERENCES);
      const perYear = seed.bytes / seed.references / 1e6;
      console.log(`history seeded: ${seed.references} references × a year (${seed.candles.minute} minute, ${seed.candles.hour} hourly, ${seed.candles.day} daily candles) in ${(seed.ms / 1000).toFixed(1)} s; SQLite ${perYear.toFixed(1)} MB per reference-year`);
    }

    // Baseline (c) runs inside this very process (bench/in-process-baseline.mjs), idle but for its own rounds.
    const inProcessPort = await freePort();
    const inProcessEnv = {
      ...env,
      NERKH_BENCH_BASELINE_PORT: String(inProcessPort),
      NERKH_BENCH_BASELINE_BODY: join(work, 'body.json'),
      NERKH_BENCH_BASELINE_HEADERS: join(work, 'headers.json'),
    };
    const server = await startServer(inProcessEnv, children, BIN, ['--import', pathToFileURL(join(ROOT, 'bench', 'in-process-baseline.mjs')).href]);
    const serverPid = server.child.pid!;
    const { rss: idleRss, peak: startPeak } = memory(serverPid);
    console.log(`nerkh ready in ${server.readyMs} ms with ${seeded + 1} accounts and keys (cold start, process spawn to /readyz); RSS ${idleRss.toFixed(1)} MB`);
    const base = `http://127.0.0.1:${env.NERKH_PORT}`;
    const auth = { 'x-api-key': key };
    // Bodies over 1 KB are sent gzipped to a client that asks (see docs/api.md#conventions).
    const gzip = { ...auth, 'accept-encoding': 'gzip' };
    const detailPath = `/v1/rates/${DETAIL_KEYS.join(',')}`;

    // The baselines serve exactly the body of one real detail response; (b) its headers too.
    const sample = await fetch(base + detailPath, { headers: auth });
    if (sample.status !== 200) throw new Error(`detail answered ${sample.status}: ${await sample.text()}`);
    const body = Buffer.from(await sample.arrayBuffer());
    const sampleHeaders: string[] = [];
    sample.headers.forEach((value, name) => {
      if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) sampleHeaders.push(name, value);
    });
    writeFileSync(join(work, 'body.json'), body);
    writeFileSync(join(work, 'headers.json'), JSON.stringify(sampleHeaders));
    const baselines = [];
    for (const mode of ['minimal', 'flat'] as const) {
      const port = await freePort();
      const child = await startChild(children, process.execPath, [join(ROOT, 'bench', 'baseline-server.mjs'), String(port), join(work, 'body.json'), join(work, 'headers.json'), mode], {}, /baseline listening/);
      baselines.push({ port, pid: child.pid! });
    }

    const allTargets: Target[] = [
      { name: BASELINE_MINIMAL, url: `http://127.0.0.1:${baselines[0]!.port}${detailPath}`, headers: auth, pid: baselines[0]!.pid },
      { name: BASELINE_FLAT, url: `http://127.0.0.1:${baselines[1]!.port}${detailPath}`, headers: auth, pid: baselines[1]!.pid },
      { name: BASELINE_IN_PROCESS, url: `http://127.0.0.1:${inProcessPort}${detailPath}`, headers: auth, pid: serverPid },
      { name: DETAIL, url: base + detailPath, headers: auth, pid: serverPid },
      { name: 'detail, 10 keys, toman', url: `${base}${detailPath}?unit=toman`, headers: auth, pid: serverPid },
      { name: 'detail, 10 keys, gzip', url: base + detailPath, headers: gzip, pid: serverPid },
      { name: 'catalogue', url: `${base}/v1/rates`, headers: auth, pid: serverPid },
      { name: 'catalogue, gzip', url: `${base}/v1/rates`, headers: gzip, pid: serverPid },
      { name: 'webservice feed', url: `${base}/webservice/bench`, headers: auth, pid: serverPid },
      { name: 'webservice feed, gzip', url: `${base}/webservice/bench`, headers: gzip, pid: serverPid },
      // As navasan's clients call it: the trailing slash, the key in ?api_key=, no headers.
      { name: NAVASAN_LATEST, url: `${base}/compat/navasan/latest/?api_key=${key}&item=${NAVASAN_ITEMS.join(',')}`, headers: {}, pid: serverPid },
    ];
    const navasanSample = await fetch(allTargets.at(-1)!.url);
    const navasanItems = Object.keys((await navasanSample.json()) as object);
    if (navasanSample.status !== 200 || navasanItems.length !== NAVASAN_ITEMS.length) throw new Error(`navasan /latest/ answered ${navasanSample.status} with ${navasanItems.join(',')}`);
    const targets = BEFORE_ONLY
      ? allTargets.filter((t) => t.name.startsWith('baseline') || t.name === DETAIL || Object.values(BEFORE_TWINS).includes(t.name))
      : COMPAT_ONLY
        ? allTargets.filter((t) => t.name.startsWith('baseline') || t.name === DETAIL || t.name === NAVASAN_LATEST)
        : allTargets;
    for (const target of targets.filter((t) => t.headers['accept-encoding'])) {
      const encoding = (await fetch(target.url, { headers: target.headers })).headers.get('content-encoding');
      if (encoding !== 'gzip') throw new Error(`${target.name}: answered with content-encoding ${encoding}, not gzip`);
    }
    if (BEFORE) {
      const beforeEnv = { ...env, NERKH_PORT: String(await freePort()), NERKH_DATA_DIR: join(work, 'data-before') };
      const before = await startServer(beforeEnv, children, join(BEFORE, 'bin', 'nerkh.js'));
      const beforeBase = `http://127.0.0.1:${beforeEnv.NERKH_PORT}`;
      const pid = before.child.pid!;
      // The earlier version asked the same way (it may ignore Accept-Encoding).
      targets.push(
        { name: 'before: detail, 10 keys', url: beforeBase + detailPath, headers: auth, pid },
        { name: 'before: catalogue, gzip asked', url: `${beforeBase}/v1/rates`, headers: gzip, pid },
        { name: 'before: webservice feed, gzip asked', url: `${beforeBase}/webservice/bench`, headers: gzip, pid },
      );
    }
    const redisPrefix = `nerkh-bench:${randomBytes(4).toString('hex')}:`;
    if (REDIS_URL && !BEFORE_ONLY && !COMPAT_ONLY) {
      // The same service on Redis: shared limiter, bus, node registry; its own port, the same accounts.
      const redisEnv = { ...env, NERKH_PORT: String(await freePort()), NERKH_REDIS_URL: REDIS_URL, NERKH_REDIS_PREFIX: redisPrefix };
      const redisServer = await startServer(redisEnv, children);
      targets.push({ name: DETAIL_REDIS, url: `http://127.0.0.1:${redisEnv.NERKH_PORT}${detailPath}`, headers: auth, pid: redisServer.child.pid! });
    } else {
      console.log('no BENCH_REDIS_URL or NERKH_TEST_REDIS_URL: the Redis mode is not measured');
    }
    cleanups.push(() => (REDIS_URL ? removePrefix(REDIS_URL, redisPrefix) : Promise.resolve()));
    const results = new Map<string, Measurement[]>(targets.map((t) => [t.name, []]));
    // The answering process's CPU time per request: what the load on a shared machine moves least.
    const cpuPerRequest = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    // The highest resident memory of the answering process while each target was loaded.
    const peaks = new Map<string, number>();
    // Warm every server up (JIT, caches) before anything is recorded.
    for (const target of targets.filter((t) => t.name !== 'catalogue' && t.name !== 'webservice feed')) await measure(target.url, target.headers, 2, CONNECTIONS);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of roundOrder(targets, round)) {
        resetPeak(target.pid);
        const cpuBefore = cpuTime(target.pid);
        const result = await measure(target.url, target.headers, SECONDS, CONNECTIONS);
        const cpuAfter = cpuTime(target.pid);
        const cpuUs = ((cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) * 1000) / (result.rps * SECONDS);
        const peak = memory(target.pid).peak;
        results.get(target.name)!.push(result);
        cpuPerRequest.get(target.name)!.push(cpuUs);
        peaks.set(target.name, Math.max(peaks.get(target.name) ?? 0, peak));
        console.log(`round ${round}: ${target.name.padEnd(36)} ${Math.round(result.rps).toString().padStart(7)} req/s  ${cpuUs.toFixed(1).padStart(6)} µs CPU/req  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  non-2xx ${result.non2xx}  peak RSS ${peak.toFixed(0)} MB`);
      }
    }
    const after = memory(serverPid);
    const serverPeak = Math.max(startPeak, ...targets.filter((t) => t.pid === serverPid).map((t) => peaks.get(t.name)!));
    const history = HISTORY && seed ? await historyPart(base, key, seed, work, children, serverPid) : null;
    report(results, cpuPerRequest, targets, peaks, { idle: idleRss, after: after.rss, peak: serverPeak }, server.readyMs, seeded + 1, history);
    if (BEFORE) reportBefore(results, cpuPerRequest);
  } finally {
    cleanup();
    for (const done of cleanups) await done().catch(() => {});
  }
}

const BASELINE_MINIMAL = 'baseline (a) node:http, 2 headers';
const BASELINE_FLAT = 'baseline (b) node:http, same headers';
const BASELINE_IN_PROCESS = 'baseline (c) = (b) inside nerkh';
const DETAIL = 'detail, 10 keys';
const DETAIL_REDIS = 'detail, 10 keys, on Redis';
const NAVASAN_LATEST = 'navasan /latest/, 10 items';

function report(
  results: Map<string, Measurement[]>,
  cpuPerRequest: Map<string, number[]>,
  targets: Target[],
  peaks: Map<string, number>,
  rss: { idle: number; after: number; peak: number },
  readyMs: number,
  accounts: number,
  history: HistoryFigures | null,
) {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  // Each round's figure against another target's in the same round; the median of those
  // ratios shrugs off a round where the machine was busy with something else.
  const ratio = (name: string, against: string) => {
    const runs = results.get(name)!;
    const others = results.get(against)!;
    return Number(median(runs.map((r, i) => r.rps / others[i]!.rps)).toFixed(3));
  };
  const rows = targets.map((target) => {
    const runs = results.get(target.name)!;
    return {
      target: target.name,
      rps: Math.round(mean(runs.map((r) => r.rps))),
      p50_ms: Number(mean(runs.map((r) => r.p50Ms)).toFixed(2)),
      p99_ms: Number(median(runs.map((r) => r.p99Ms)).toFixed(2)),
      p99_worst_ms: Number(Math.max(...runs.map((r) => r.p99Ms)).toFixed(2)),
      non_2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
      vs_a: ratio(target.name, BASELINE_MINIMAL),
      vs_b: ratio(target.name, BASELINE_FLAT),
      cpu_us_per_request: Number(median(cpuPerRequest.get(target.name)!).toFixed(1)),
      peak_rss_mb: Number(peaks.get(target.name)!.toFixed(1)),
    };
  });
  console.log('');
  console.log(`${'target'.padEnd(36)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'worst'.padStart(7)} ${'non-2xx'.padStart(8)} ${'vs (a)'.padStart(7)} ${'vs (b)'.padStart(7)} ${'µs CPU'.padStart(7)} ${'peak MB'.padStart(8)}`);
  for (const row of rows) {
    console.log(
      `${row.target.padEnd(36)} ${String(row.rps).padStart(8)} ${row.p50_ms.toFixed(2).padStart(7)} ${row.p99_ms.toFixed(2).padStart(7)} ${row.p99_worst_ms.toFixed(2).padStart(7)} ${String(row.non_2xx).padStart(8)} ${row.vs_a.toFixed(3).padStart(7)} ${row.vs_b.toFixed(3).padStart(7)} ${row.cpu_us_per_request.toFixed(1).padStart(7)} ${row.peak_rss_mb.toFixed(0).padStart(8)}`,
    );
  }
  console.log('req/s: mean of the rounds; p50, p99: median round (worst: worst round); vs (a), vs (b): median over rounds of req/s against that baseline in the same round; µs CPU: median over rounds of the CPU time (user + system) of the answering process per request; peak MB: highest RSS of the answering process while that target was loaded.');
  // What the process costs (c against b) apart from what the endpoint costs (detail against c).
  const processShare = ratio(BASELINE_IN_PROCESS, BASELINE_FLAT);
  const endpointShare = ratio(DETAIL, BASELINE_IN_PROCESS);
  console.log(`the same bare handler inside the nerkh process against its own process (c vs b): ${processShare.toFixed(3)}; detail against that handler in the same process (detail vs c): ${endpointShare.toFixed(3)}`);
  const redis = results.has(DETAIL_REDIS) ? ratio(DETAIL_REDIS, DETAIL) : null;
  if (redis !== null) console.log(`detail on Redis against the embedded process, same rounds: ${redis.toFixed(3)} (target ≥ 0.7)`);
  const navasan = results.has(NAVASAN_LATEST) ? ratio(NAVASAN_LATEST, DETAIL) : null;
  if (navasan !== null) console.log(`navasan /latest/ for ten items against detail for the same ten references, same rounds: ${navasan.toFixed(3)} (target ≥ 0.9: ${navasan >= 0.9 ? 'met' : 'NOT met'})`);
  console.log(`server RSS with ${accounts} accounts and keys: ${rss.idle.toFixed(1)} MB idle, ${rss.after.toFixed(1)} MB after the runs, ${rss.peak.toFixed(1)} MB peak; cold start to ready: ${readyMs} ms`);
  const detail = rows.find((row) => row.target === DETAIL)!;
  const verdict = detail.vs_b >= 0.9 && detail.non_2xx === 0 && detail.p99_ms <= 5 && rss.after <= 150 && readyMs <= 1500 && (redis === null || redis >= 0.7);
  console.log(`detail target (≥ 0.9 of (b), zero non-2xx, p99 ≤ 5 ms, RSS ≤ 150 MB, ready ≤ 1.5 s, Redis ≥ 0.7 of embedded): ${verdict ? 'met' : 'NOT met'}; stretch ≥ 0.8 of (a): ${detail.vs_a >= 0.8 ? 'met' : 'not met'}`);
  if (history) reportHistory(history);
  const out = join(ROOT, 'bench', 'results', 'latest.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    JSON.stringify(
      {
        at: new Date().toISOString(),
        generator: results.get(targets[0]!.name)![0]!.generator,
        rounds: ROUNDS,
        seconds: SECONDS,
        connections: CONNECTIONS,
        rows,
        redis_vs_embedded: redis,
        navasan_latest_vs_detail: navasan,
        in_process_baseline_vs_b: processShare,
        detail_vs_in_process_baseline: endpointShare,
        rss_mb: { idle: Number(rss.idle.toFixed(1)), after_runs: Number(rss.after.toFixed(1)), peak: Number(rss.peak.toFixed(1)) },
        ready_ms: readyMs,
        accounts,
        target_met: verdict,
        history,
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`results written to ${out}`);
}

interface HistoryFigures {
  references: number;
  seed_seconds: number;
  sqlite_mb_per_reference_year: number;
  postgres_mb_per_reference_year: number | null;
  ranges: ({ interval: string; cpuMsPerRequest: number } & RangeMeasurement)[];
  popular: PopularFigures;
  recording: { seconds: number; recorder_percent_of_core: number; process_percent_of_core: number};
}

/**
 * Random ranges of 1,000 candles against the seeded year (each interval on its own: 1m and 1h read their own
 * grain, 15m rolls up 15,000 minute candles), then the recording cost on a demo server of its own.
 */
async function historyPart(base: string, key: string, seed: SeedResult, work: string, children: ChildProcess[], serverPid: number): Promise<HistoryFigures> {
  const ranges: HistoryFigures['ranges'] = [];
  for (const interval of ['1m', '1h', '15m'] as const) {
    const paths = randomRanges(HISTORY_REFERENCES, interval, 5000);
    // After the load before, the server may still shed load (503 with Retry-After) for a few seconds.
    for (let attempt = 1; ; attempt++) {
      const sample = await getOnce(base + paths[0]!, { 'x-api-key': key });
      const body = JSON.parse(sample.text) as { count?: number };
      if (sample.status === 200 && body.count === 1000) break;
      if (sample.status !== 503 || attempt === 10) throw new Error(`history answered ${sample.status} with ${body.count} candles for ${paths[0]}: ${sample.text.slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 2000));
    }
    await measureRanges(base, key, paths, 2, CONNECTIONS, work);
    const cpuBefore = cpuSeconds(serverPid);
    const result = await measureRanges(base, key, paths, SECONDS * 2, CONNECTIONS, work);
    // The server's own CPU per request: what a query costs whatever else the machine runs.
    const cpuMs = ((cpuSeconds(serverPid) - cpuBefore) * 1000) / (result.rps * SECONDS * 2);
    ranges.push({ interval, ...result, cpuMsPerRequest: Number(cpuMs.toFixed(2)) });
    console.log(`history ${interval} × 1,000 candles, random ranges: ${Math.round(result.rps)} req/s  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  non-2xx ${result.non2xx}  server CPU ${cpuMs.toFixed(2)} ms/request`);
  }
  const popular = await popularRanges(base, key, work, children, ROUNDS, SECONDS, CONNECTIONS);
  let postgres: number | null = null;
  if (HISTORY_DATABASE_URL) {
    const schema = `nerkh_bench_history_${process.pid}`;
    try {
      await seedHistory(work, HISTORY_REFERENCES.slice(0, 1), Date.now(), HISTORY_DATABASE_URL, schema);
      postgres = (await postgresBytes(HISTORY_DATABASE_URL, schema)) / 1e6;
    } finally {
      await dropSchema(HISTORY_DATABASE_URL, schema);
    }
  }
  return {
    references: seed.references,
    seed_seconds: Number((seed.ms / 1000).toFixed(1)),
    sqlite_mb_per_reference_year: Number((seed.bytes / seed.references / 1e6).toFixed(2)),
    postgres_mb_per_reference_year: postgres === null ? null : Number(postgres.toFixed(2)),
    ranges,
    popular,
    recording: await recordingCost(work, children),
  };
}

/**
 * A demo server (no config: the feeder moves every value every 2 s) on a fresh store: once its 30-day past is
 * written, the recorder's busy time and the whole process's CPU over the same seconds.
 */
async function recordingCost(work: string, children: ChildProcess[]): Promise<HistoryFigures['recording']> {
  const cwd = join(work, 'demo');
  mkdirSync(cwd, { recursive: true });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, NERKH_DATA_DIR: join(cwd, 'data'), NERKH_PORT: String(port), NERKH_HOST: '127.0.0.1', NERKH_LOG_LEVEL: 'info' };
  delete env.NERKH_CONFIG;
  delete env.NERKH_DATABASE_URL;
  // Ready once the demo's past is written, which takes seconds to a minute on a busy machine.
  const child = await startChild(children, process.execPath, [...SERVE_FLAGS, BIN, 'serve'], env, /history backfilled/, cwd, 180_000);
  const read = async () => {
    const { text } = await getOnce(`http://127.0.0.1:${port}/metrics`);
    return { busy: metric(text, 'nerkh_history_recording_busy_seconds'), cpu: cpuSeconds(child.pid!), at: performance.now() };
  };
  // A few seconds for the backfill's last writes to settle.
  await new Promise((r) => setTimeout(r, 3000));
  const before = await read();
  await new Promise((r) => setTimeout(r, RECORD_SECONDS * 1000));
  const after = await read();
  const seconds = (after.at - before.at) / 1000;
  child.kill('SIGTERM');
  const figures = {
    seconds: Number(seconds.toFixed(1)),
    recorder_percent_of_core: Number((((after.busy - before.busy) / seconds) * 100).toFixed(2)),
    process_percent_of_core: Number((((after.cpu - before.cpu) / seconds) * 100).toFixed(1)),
  };
  console.log(
    `recording (demo feeder, 344 references moving every 2 s, ${figures.seconds} s): recorder ${figures.recorder_percent_of_core}% of one core; ` +
      `whole process ${figures.process_percent_of_core}% (feeder, engine, recorder)`,
  );
  return figures;
}

function reportHistory(history: HistoryFigures) {
  console.log('');
  console.log(`history: ${history.references} references × a year seeded in ${history.seed_seconds} s; SQLite ${history.sqlite_mb_per_reference_year} MB per reference-year` + (history.postgres_mb_per_reference_year === null ? '' : `, PostgreSQL ${history.postgres_mb_per_reference_year} MB`));
  for (const r of history.ranges) console.log(`  ${r.interval.padEnd(4)} ranges of 1,000 candles: ${Math.round(r.rps)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, non-2xx ${r.non2xx}, server CPU ${r.cpuMsPerRequest} ms/request`);
  const { popular } = history;
  console.log(
    `  popular ranges (latest 1,000 hourly candles of ${popular.paths} references, ${popular.body_bytes} bytes each): ${popular.ratio_median.toFixed(3)}× a bare node:http server writing the same bytes ` +
      `(median of ${popular.rounds.length} rounds; target ≥ 0.5: ${popular.ratio_median >= 0.5 ? 'met' : 'NOT met'})`,
  );
  const worst = Math.max(...history.ranges.map((r) => r.p99Ms));
  console.log(`history target (p99 ≤ 20 ms for random 1,000-candle ranges at ${CONNECTIONS} connections): ${worst <= 20 ? 'met' : 'NOT met'} (worst interval ${worst.toFixed(2)} ms)`);
  const rec = history.recording;
  console.log(`recording target (≤ 5 % of one core with the demo feeder): ${rec.recorder_percent_of_core <= 5 ? 'met' : 'NOT met'} (${rec.recorder_percent_of_core}%)`);
}

/** CPU seconds, user and system, a process has used so far. */
function cpuSeconds(pid: number): number {
  const { user, system } = cpuTime(pid);
  return (user + system) / 1000;
}

function benchEnvironment(work: string, port: number): NodeJS.ProcessEnv {
  const config = {
    sources: ['alpha', 'beta', 'gamma'].map((name) => ({ name, type: 'file', path: join(work, 'sources', `${name}.json`), max_age_seconds: 86_400, poll_seconds: 1 })),
    plans: {
      bench: { services: ['catalogue', 'detail', 'status', 'webservice', 'usage', 'history'], max_references: null, refresh_interval_seconds: 0, requests_per_minute: 1_000_000_000, requests_per_day: null, history_days: null },
    },
  };
  writeFileSync(join(work, 'config.json'), JSON.stringify(config));
  return { ...process.env, NERKH_DATA_DIR: join(work, 'data'), NERKH_CONFIG: join(work, 'config.json'), NERKH_LOG_LEVEL: 'warn', NERKH_PORT: String(port), NERKH_HOST: '127.0.0.1' };
}

/**
 * The order of one round: each earlier-build target right beside its twin,
 * first after it in odd rounds and before it in even ones, so neither build
 * is always the one loaded after the other.
 */
function roundOrder(targets: Target[], round: number): Target[] {
  const twins = new Map(Object.entries(BEFORE_TWINS).map(([before, twin]) => [twin, targets.find((t) => t.name === before)]));
  const order: Target[] = [];
  for (const target of targets) {
    if (target.name in BEFORE_TWINS) continue;
    const before = twins.get(target.name);
    if (before === undefined) order.push(target);
    else order.push(...(round % 2 === 1 ? [target, before] : [before, target]));
  }
  return order;
}

/** This build against the earlier one, round by round: req/s and CPU per request, each as min / median / max of the rounds' ratios. */
function reportBefore(results: Map<string, Measurement[]>, cpuPerRequest: Map<string, number[]>) {
  console.log('');
  console.log('this build / the earlier build, same rounds (min / median / max over rounds):');
  const spread = (values: number[]) => `${Math.min(...values).toFixed(3)} / ${median(values).toFixed(3)} / ${Math.max(...values).toFixed(3)}`;
  for (const [before, twin] of Object.entries(BEFORE_TWINS)) {
    const ours = results.get(twin);
    const theirs = results.get(before);
    if (!ours || !theirs) continue;
    const rps = ours.map((r, i) => r.rps / theirs[i]!.rps);
    const cpu = cpuPerRequest.get(twin)!.map((us, i) => us / cpuPerRequest.get(before)![i]!);
    console.log(`  ${twin.padEnd(24)} req/s ${spread(rps)}   CPU per request ${spread(cpu)}`);
  }
}

/** Accounts and keys through the real store, in one process (the CLI would take minutes for 10,000); `storeModule`: whose store code writes them. */
async function seedAccounts(env: NodeJS.ProcessEnv, count: number, storeModule: string): Promise<number> {
  if (count <= 0) return 0;
  const { Store } = (await import(storeModule)) as typeof import('../src/store/store.js');
  const store = await Store.open({ databaseUrl: null, dataDir: env.NERKH_DATA_DIR! });
  try {
    for (let i = 0; i < count; i++) {
      const account = await store.accounts.create(`seed${String(i).padStart(5, '0')}`, i % 3 === 0 ? 'pro' : 'basic');
      await store.keys.issue(account.id, { label: 'seed' });
    }
  } finally {
    await store.close();
  }
  return count;
}

await main();
// The push stream's figures, on a server of its own (bench/stream.ts); BENCH_STREAMS=0 leaves them out.
// With BENCH_BEFORE, for both builds in turn (bench/stream-before.ts).
if (process.env.BENCH_STREAMS !== '0') {
  if (BEFORE) await streamBeforeAfter(BEFORE);
  else await streamBench();
}
