/**
 * `npm run bench:stream-slices`: where the stream fan-out's slice budget
 * should sit. nerkh's hub, as built, behind a minimal server
 * (bench/stream-slice-server.mjs), holds 10,000 streams of the stream bench's
 * client processes; for each budget it gets one change a second and, all
 * along, one small request every 2 ms from this process. Per budget:
 *
 * - publish→receipt p50/p99 over every stream (from just before the POST);
 * - the server's loop lag during its fan-outs (bench/lag-probe.mjs);
 * - the small requests sent during a fan-out: their p99;
 * - slices per fan-out and the longest slice, as the hub counts them;
 * - the server's CPU time per change (user + system, the requests included),
 *   which other work on the machine moves least: what slicing costs.
 *
 * BENCH_SLICES lists the budgets (`streams:all` is one loop, as before
 * slicing; a budget may be listed more than once, to alternate runs);
 * BENCH_STREAMS, BENCH_STREAM_CLIENTS, BENCH_SLICE_CHANGES and
 * BENCH_SLICE_REQUEST_MS the shape. Writes bench/results/stream-slices.json.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpuTime, freePort, openFileLimit, ROOT, startChild } from './processes.js';
import { deliver, post } from './stream-anchors.js';
import { startClient } from './stream-clients.js';
import { fanoutWindows, lagDuring, quantile, type Lag, type Latencies } from './stream-latency.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 4);
const CHANGES = Number(process.env.BENCH_SLICE_CHANGES ?? 10);
const BUDGETS = (process.env.BENCH_SLICES ?? 'streams:all,ms:1,ms:2,ms:3,ms:4,ms:8,streams:250,streams:500,streams:1000').split(',');
/** BENCH_SLICE_REQUEST_MS=0: no small requests, to see the fan-out alone. */
const REQUEST_EVERY_MS = Number(process.env.BENCH_SLICE_REQUEST_MS ?? 2);
/** nerkh's usd_free rate as the detail endpoint serves it, give or take the value: the size of a real `rates` event. */
const RATE = (version: number) =>
  `{"key":"usd_free","name":"US dollar (free market)","category":"currency","value":${1_000_000 + version},"unit":"IRR","change":${version},"change_percent":0.01,"updated_at":"2026-11-23T12:00:00+03:30","state":"ok","version":${version}}`;

interface BudgetResult {
  budget: string;
  open: number;
  latency: Latencies;
  lag: Lag;
  requests_during_fanout: { count: number; p50_ms: number | null; p99_ms: number | null; max_ms: number | null };
  slices_per_fanout: number;
  longest_slice_ms: number;
  /** Mean time from a change being ready to its last stream's write, in the server. */
  fanout_ms: number;
  /** The server's CPU time from the first change to the last receipt, per change; and the small requests it answered meanwhile. */
  cpu_ms_per_change: number;
  requests_answered: number;
}

async function main(): Promise<void> {
  const needed = STREAMS + 1_000;
  if (openFileLimit('self') < needed) throw new Error(`this process may open ${openFileLimit('self')} files; ${STREAMS} streams need about ${needed}: raise it with \`ulimit -n ${needed}\``);
  const work = mkdtempSync(join(tmpdir(), 'nerkh-bench-slices-'));
  const children: ChildProcess[] = [];
  const results: BudgetResult[] = [];
  const loadStart = loadavg()[0]!;
  try {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => startClient(children)));
    for (const budget of BUDGETS) {
      const port = await freePort();
      const probePort = await freePort();
      const server = await startChild(
        children,
        process.execPath,
        ['--import', 'tsx', '--import', pathToFileURL(join(ROOT, 'bench', 'lag-probe.mjs')).href, join(ROOT, 'bench', 'stream-slice-server.mjs'), String(port), budget],
        { NERKH_BENCH_PROBE_PORT: String(probePort) },
        /slice server listening/,
      );
      const base = `http://127.0.0.1:${port}`;
      const requester = REQUEST_EVERY_MS > 0 ? startRequests(`${base}/detail`) : { stop: async () => [] as [number, number][] };
      let cpuBefore = { user: 0, system: 0 };
      let cpuAfter = cpuBefore;
      const publishing = [0, 0];
      const run = await deliver(
        { clients, children, work, streams: STREAMS, changes: CHANGES, data: RATE },
        `${base}/stream`,
        {},
        (version, data) => post(`${base}/publish?id=${version}`, data),
        {
          start: () => ((cpuBefore = cpuTime(server.pid!)), (publishing[0] = Date.now())),
          end: () => ((cpuAfter = cpuTime(server.pid!)), (publishing[1] = Date.now())),
        },
      );
      const sent = await requester.stop();
      const counts = (await (await fetch(`${base}/counts`)).json()) as { fanouts: { count: number; seconds: number }; slices: { count: number; maxSeconds: number } };
      const windows = fanoutWindows(run.changesSent, run.reports);
      const during = sent
        .filter(([at]) => windows.some(([from, to]) => at >= from && at <= to))
        .map(([, ms]) => ms)
        .sort((a, b) => a - b);
      const result: BudgetResult = {
        budget,
        open: run.open,
        latency: run.latency,
        lag: await lagDuring(`http://127.0.0.1:${probePort}`, run.changesSent, run.reports),
        requests_during_fanout: { count: during.length, p50_ms: quantile(during, 0.5), p99_ms: quantile(during, 0.99), max_ms: quantile(during, 1) },
        slices_per_fanout: Math.round(counts.slices.count / Math.max(1, counts.fanouts.count)),
        longest_slice_ms: round1(counts.slices.maxSeconds * 1000),
        fanout_ms: round1((counts.fanouts.seconds * 1000) / Math.max(1, counts.fanouts.count)),
        cpu_ms_per_change: round1((cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) / CHANGES),
        requests_answered: sent.filter(([at]) => at >= publishing[0]! && at <= publishing[1]!).length,
      };
      results.push(result);
      server.kill('SIGKILL');
      print(result);
    }
    for (const client of clients) client.child.send({ type: 'close' });
    const out = join(ROOT, 'bench', 'results', 'stream-slices.json');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), load_average: [round1(loadStart), round1(loadavg()[0]!)], streams: STREAMS, results }, null, 2) + '\n');
    console.log(`results written to ${out}`);
  } finally {
    for (const child of children) child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
}

/** One request at a time, a new one every REQUEST_EVERY_MS, on one kept-alive connection: [sent at (epoch ms), took (ms)]. */
function startRequests(url: string): { stop(): Promise<[number, number][]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sent: [number, number][] = [];
  let running = true;
  const once = () =>
    new Promise<void>((resolve) => {
      const at = Date.now();
      const started = performance.now();
      request(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => {
          sent.push([at, performance.now() - started]);
          resolve();
        });
      })
        .on('error', () => resolve())
        .end();
    });
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await once();
      await new Promise((r) => setTimeout(r, Math.max(0, REQUEST_EVERY_MS - (performance.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return sent;
    },
  };
}

function print(r: BudgetResult): void {
  console.log(
    `${r.budget.padEnd(13)} receipt p50 ${r.latency.p50_ms} p99 ${r.latency.p99_ms} ms (${r.latency.missing} missing) | lag p99 ${r.lag.p99_ms} max ${r.lag.max_ms} ms (own p99 ${r.lag.own.p99_ms}; GC longest ${r.lag.gc.max_ms}) | ` +
      `requests during fan-out: ${r.requests_during_fanout.count}, p99 ${r.requests_during_fanout.p99_ms?.toFixed(1)} ms | ${r.slices_per_fanout} slices, longest ${r.longest_slice_ms} ms, fan-out ${r.fanout_ms} ms | ` +
      `CPU ${r.cpu_ms_per_change} ms a change (${r.requests_answered} requests)`,
  );
}

const round1 = (n: number) => Number(n.toFixed(1));

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await main();
