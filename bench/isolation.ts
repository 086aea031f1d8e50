/**
 * `npm run bench:isolation`: what heavy work by one caller costs everyone else. One real
 * `nerkh serve` (SQLite, a seeded year of candles for four references, bench/lag-probe.mjs
 * preloaded) answers detail for one key, in alternating rounds:
 *
 * - alone;
 * - beside another key asking random 1,000-candle `1m` history ranges;
 * - beside another key flooding `/v1/usage` (its 90-day report with a full error log, the
 *   costliest report there is).
 *
 * For each: detail's requests a second and p99 (wrk), its ratio to alone, the non-2xx answers
 * each side got, and the server's event-loop lag over the round (p99 of the probe's 1 ms timer;
 * "own" less the time the main thread waited for a CPU, which on a 2-core machine running wrk
 * beside the server is part of every sample). The streams' side of isolation is in
 * `npm run bench:stream`. With BENCH_BEFORE (a built checkout of an earlier version) that
 * version is measured the same way, after this one. Never part of `npm test`.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Store } from '../src/store/store.js';
import { seedUsageHistory } from '../test/support/usage-history.js';
import { HISTORY_REFERENCES, randomRanges, seedHistory, writeRangesScript } from './history.js';
import { measureBeside, parseWrk, type Measurement } from './load.js';
import { BIN, freePort, median, ROOT, startServer, writeSources } from './processes.js';
import { quantile } from './stream-latency.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const DETAIL_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const LOAD_CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 20);
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : null;
const REFERENCES = HISTORY_REFERENCES.slice(0, 4);
/** The targets: detail keeps this share of its throughput alone, and the loop's lag p99 under the history load. */
const MIN_RATIO = 0.25;
const LAG_P99_MS = 20;

type Load = 'alone' | 'history' | 'usage';
interface Round {
  detail: Measurement;
  load: Measurement | null;
  lag: { p99: number | null; ownP99: number | null };
}
type Result = { version: string } & Record<Load, Round[]>;

async function main() {
  const results: Result[] = [await run('this version', BIN)];
  if (BEFORE) results.push(await run(`before (${BEFORE})`, join(BEFORE, 'bin', 'nerkh.js')));
  let met = true;
  for (const result of results) {
    const alone = median(result.alone.map((r) => r.detail.rps));
    console.log(`\n${result.version}`);
    for (const load of ['alone', 'history', 'usage'] as const) {
      const rounds = result[load];
      const rps = median(rounds.map((r) => r.detail.rps));
      const ratio = rps / alone;
      const detailNon2xx = rounds.reduce((sum, r) => sum + r.detail.non2xx, 0);
      const loadLine = load === 'alone' ? '' : `; the load ${median(rounds.map((r) => r.load!.rps)).toFixed(0)} req/s, non-2xx ${rounds.reduce((sum, r) => sum + r.load!.non2xx, 0)}`;
      const lag = `lag p99 ${show(median(rounds.map((r) => r.lag.p99 ?? NaN)))} ms (own ${show(median(rounds.map((r) => r.lag.ownP99 ?? NaN)))} ms)`;
      console.log(`  detail ${load.padEnd(7)} ${rps.toFixed(0).padStart(6)} req/s  p99 ${median(rounds.map((r) => r.detail.p99Ms)).toFixed(1)} ms  ${ratio.toFixed(2)}× of alone  non-2xx ${detailNon2xx}  ${lag}${loadLine}`);
      if (result === results[0] && load !== 'alone') met &&= ratio >= MIN_RATIO && detailNon2xx === 0;
    }
    if (result === results[0]) met &&= median(result.history.map((r) => r.lag.p99 ?? Infinity)) <= LAG_P99_MS;
  }
  console.log(`\ntargets (this version): detail ≥ ${MIN_RATIO}× of alone beside each load with no non-2xx, lag p99 ≤ ${LAG_P99_MS} ms under the history load: ${met ? 'met' : 'NOT met'}`);
}

async function run(version: string, bin: string): Promise<Result> {
  const work = mkdtempSync(join(tmpdir(), 'nerkh-bench-isolation-'));
  const children: ChildProcess[] = [];
  try {
    const port = await freePort();
    const probePort = await freePort();
    writeSources(work);
    const config = {
      sources: ['alpha', 'beta', 'gamma'].map((name) => ({ name, type: 'file', path: join(work, 'sources', `${name}.json`), max_age_seconds: 86_400, poll_seconds: 1 })),
      plans: { bench: { services: ['catalogue', 'detail', 'usage', 'history'], refresh_interval_seconds: 0, requests_per_minute: 1_000_000_000, requests_per_day: null, history_days: null } },
    };
    writeFileSync(join(work, 'config.json'), JSON.stringify(config));
    const dataDir = join(work, 'data');
    const env = { ...process.env, NERKH_DATA_DIR: dataDir, NERKH_CONFIG: join(work, 'config.json'), NERKH_LOG_LEVEL: 'warn', NERKH_PORT: String(port), NERKH_HOST: '127.0.0.1', NERKH_BENCH_PROBE_PORT: String(probePort) };
    const keys = await seed(dataDir);
    const server = await startServer(env, children, bin, ['--import', pathToFileURL(join(ROOT, 'bench', 'lag-probe.mjs')).href]);
    // Its warnings (shedding, a failed worker) belong beside the figures.
    server.child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    const base = `http://127.0.0.1:${port}`;
    const probe = `http://127.0.0.1:${probePort}`;
    const ranges = writeRangesScript(work, keys.loader, randomRanges(REFERENCES, '1m', 2000));
    const detail = () => measureBeside(`${base}/v1/rates/usd_free`, { 'x-api-key': keys.neighbour }, SECONDS, DETAIL_CONNECTIONS);
    const loads: Record<Exclude<Load, 'alone'>, () => Promise<Measurement>> = {
      history: () => wrkScript(base, ranges, SECONDS, LOAD_CONNECTIONS),
      usage: () => measureBeside(`${base}/v1/usage?days=90`, { 'x-api-key': keys.loader }, SECONDS, LOAD_CONNECTIONS),
    };
    // Warm both paths (the block cache, the usage report) before anything is counted.
    await Promise.all([detail(), loads.history()]);
    const result: Result = { version, alone: [], history: [], usage: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const load of ['alone', 'history', 'usage'] as const) {
        const from = Date.now();
        const [measured, loaded] = await Promise.all([detail(), load === 'alone' ? null : loads[load]()]);
        const lag = await lagBetween(probe, from, Date.now());
        result[load].push({ detail: measured, load: loaded, lag });
        console.log(`${version}, round ${round}, ${load}: detail ${measured.rps.toFixed(0)} req/s (p99 ${measured.p99Ms.toFixed(1)} ms, non-2xx ${measured.non2xx})${loaded ? `, load ${loaded.rps.toFixed(0)} req/s (non-2xx ${loaded.non2xx})` : ''}, lag p99 ${show(lag.p99)} ms`);
      }
    }
    return result;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
}

/** The probe's samples between two moments: p99 of the lag, and of the lag less the wait for a CPU. */
async function lagBetween(probe: string, from: number, to: number): Promise<Round['lag']> {
  const samples = (await (await fetch(`${probe}/?from=${from}&to=${to}`)).json()) as [number, number][];
  const lags = samples.map(([lag]) => lag).sort((a, b) => a - b);
  const own = samples.map(([lag, waited]) => lag - waited).sort((a, b) => a - b);
  return { p99: quantile(lags, 0.99), ownP99: quantile(own, 0.99) };
}

/** wrk with a request script, without blocking this process. */
async function wrkScript(base: string, script: string, seconds: number, connections: number): Promise<Measurement> {
  const { stdout } = await promisify(execFile)('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, base], { encoding: 'utf8' });
  return parseWrk(stdout);
}

/** Two accounts through the real store (the loader with a full usage history) and a year of candles. */
async function seed(dataDir: string): Promise<{ loader: string; neighbour: string }> {
  await seedHistory(dataDir, REFERENCES);
  const store = await Store.open({ databaseUrl: null, dataDir });
  try {
    const loading = await store.accounts.create('loader', 'bench');
    await seedUsageHistory(store, loading.id);
    const other = await store.accounts.create('neighbour', 'bench');
    return { loader: (await store.keys.issue(loading.id)).key, neighbour: (await store.keys.issue(other.id)).key };
  } finally {
    await store.close();
  }
}

function show(ms: number | null): string {
  return ms === null || Number.isNaN(ms) ? '–' : ms.toFixed(1);
}

await main();
