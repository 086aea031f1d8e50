/**
 * `npm run bench:stream` (also the last part of `npm run bench`): one
 * `nerkh serve` process holding 10,000 open GET /v1/stream connections.
 *
 * - Delivery latency: a feeder process rewrites a source file once a second;
 *   the server builds a snapshot and pushes a `rates` event to every stream.
 *   Latency = the client's receipt time (Date.now() when the chunk carrying the
 *   event arrives) minus the snapshot's build time on the server (the
 *   `nerkh_snapshot_built_at_seconds` gauge, matched to the event id through
 *   `nerkh_snapshot_version`). Both clocks are this host's wall clock.
 * - RSS of the server at 10,000 streams.
 * - Detail throughput while the streams are open, against a bare node:http
 *   baseline serving the same bytes in the same run (and without streams).
 * - The server's event-loop lag during its fan-outs (bench/lag-probe.mjs,
 *   preloaded into it).
 * - The same delivery, by the same client processes at the same number of
 *   streams, from a bare node:http fan-out and from nginx with nchan
 *   (bench/stream-anchors.ts; BENCH_STREAM_ANCHORS=0 leaves them out).
 *
 * Clients: several processes (bench/stream-client.mjs) with plain node:http,
 * a few thousand connections each. Everything talks to 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { measure, type Measurement } from './load.js';
import { cpuTime, freePort, median, memory, openFileLimit, resetPeak, ROOT, startChild, startServer, writeSources } from './processes.js';
import { bareAnchor, nchanAnchor, type AnchorResult } from './stream-anchors.js';
import { openStreams, reports as clientReports, resetClients, startClient } from './stream-clients.js';
import { lagDuring, latencies, type Change, type Lag } from './stream-latency.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 4);
const ROUNDS = Number(process.env.BENCH_STREAM_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const QUIET_SECONDS = Number(process.env.BENCH_STREAM_QUIET_SECONDS ?? 15);
const CHANGE_MS = 1000;
const ANCHORS = process.env.BENCH_STREAM_ANCHORS !== '0';
/** The targets: delivery p99 within this factor of the bare fan-out's, and the loop's lag p99 during fan-outs. */
const BARE_FACTOR = 1.25;
const LAG_P99_MS = 20;
/** A board's worth of rates: the stream and the detail requests ask for the same ten. */
const KEYS = ['usd_free', 'eur_free', 'coin_emami', 'gold_18k', 'gold_ounce', 'coin_bahar', 'coin_half', 'coin_quarter', 'gold_mithqal', 'usdt_irr'];

/** One run of the stream bench: by default this build, with the anchors, its result written to bench/results/stream.json. */
export interface StreamBenchOptions {
  /** The build to serve (its bin/nerkh.js) and the store module that seeds its accounts (an earlier build opens only a store it made). */
  root?: string;
  storeModule?: string;
  anchors?: boolean;
  /** False: the result is only returned (a before/after comparison writes its own summary). */
  write?: boolean;
}

export type StreamResult = Awaited<ReturnType<typeof runStreamBench>>;

export async function streamBench(options: StreamBenchOptions = {}): Promise<boolean> {
  return (await runStreamBench(options)).target_met;
}

export async function runStreamBench({ root = ROOT, storeModule = '../src/store/store.js', anchors: withAnchors = ANCHORS, write = true }: StreamBenchOptions = {}) {
  const work = mkdtempSync(join(tmpdir(), 'nerkh-bench-stream-'));
  const children: ChildProcess[] = [];
  const cleanup = () => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const loadStart1 = loadavg()[0]!;
    const env = environment(work);
    writeSources(work);
    const keys = await seed(env, storeModule);
    const probePort = await freePort();
    const probeUrl = `http://127.0.0.1:${probePort}`;
    const server = await startServer({ ...env, NERKH_BENCH_PROBE_PORT: String(probePort) }, children, join(root, 'bin', 'nerkh.js'), ['--import', pathToFileURL(join(ROOT, 'bench', 'lag-probe.mjs')).href]);
    const serverPid = server.child.pid!;
    const needed = STREAMS + 1_000;
    for (const [who, limit] of [['the server', openFileLimit(serverPid)], ['this process', openFileLimit('self')]] as const) {
      if (limit < needed) throw new Error(`${who} may open ${limit} files; ${STREAMS} streams need about ${needed}: raise it with \`ulimit -n ${needed}\``);
    }
    const base = `http://127.0.0.1:${env.NERKH_PORT}`;
    const detailPath = `/v1/rates/${KEYS.join(',')}`;
    const detailHeaders = { 'x-api-key': keys.detail };
    const baselineUrl = await startBaseline(work, base + detailPath, detailHeaders, children);

    const rounds = async (label: string) => {
      const pairs: { baseline: Measurement; detail: Measurement }[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const baseline = await measure(baselineUrl, detailHeaders, SECONDS, CONNECTIONS);
        const detail = await measure(base + detailPath, detailHeaders, SECONDS, CONNECTIONS);
        pairs.push({ baseline, detail });
        console.log(`${label} round ${round}: baseline ${Math.round(baseline.rps)} req/s, detail ${Math.round(detail.rps)} req/s (p99 ${detail.p99Ms.toFixed(2)} ms, non-2xx ${detail.non2xx})`);
      }
      return summarise(pairs);
    };

    await measure(baselineUrl, detailHeaders, 2, CONNECTIONS);
    await measure(base + detailPath, detailHeaders, 2, CONNECTIONS);
    const without = await rounds('no streams');
    const idleRss = memory(serverPid).rss;

    // Open every stream.
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => startClient(children)));
    resetPeak(serverPid);
    const opened = await openStreams(clients, `${base}/v1/stream?keys=${KEYS.join(',')}`, { 'x-api-key': keys.stream }, STREAMS);
    const { ok, failed, ms: openMs } = opened;
    console.log(`${ok} streams open in ${openMs} ms (${failed} refused${failed ? `, first: ${opened.firstError}` : ''})`);
    await sleep(2000);
    const openRss = memory(serverPid);
    console.log(`server RSS with ${ok} streams: ${openRss.rss.toFixed(1)} MB (peak while opening ${openRss.peak.toFixed(1)} MB; ${idleRss.toFixed(1)} MB before)`);

    // A change a second: first with nothing else running, then under detail load.
    const feeder = await startFeeder(work, `${base}/metrics`, children);
    const quietStart = Date.now();
    const cpuBefore = cpuTime(serverPid);
    const quietBefore = await scrape(base);
    await sleep(QUIET_SECONDS * 1000);
    const cpuAfter = cpuTime(serverPid);
    const quietAfter = await scrape(base);
    const sent = gauge(quietAfter, 'nerkh_stream_events_sent_total') - gauge(quietBefore, 'nerkh_stream_events_sent_total');
    // The server's own part: how long writing one event to all the streams took (the loop, in the server).
    const fanouts = gauge(quietAfter, 'nerkh_stream_fanouts_total') - gauge(quietBefore, 'nerkh_stream_fanouts_total');
    const fanoutSeconds = gauge(quietAfter, 'nerkh_stream_fanout_seconds_total') - gauge(quietBefore, 'nerkh_stream_fanout_seconds_total');
    const fanoutMs = { mean: round1((fanoutSeconds * 1000) / Math.max(1, fanouts)), max: round1(gauge(quietAfter, 'nerkh_stream_fanout_max_seconds') * 1000) };
    const loadStart = Date.now();
    const withStreams = await rounds(`${ok} streams`);
    const loadEnd = Date.now();
    feeder.child.kill('SIGTERM');
    await sleep(1000);
    const afterRss = memory(serverPid);
    const metrics = await scrape(base);

    const reports = await clientReports(clients);
    const quietChanges = feeder.changes.filter((c) => c.written_at >= quietStart && c.written_at < loadStart - CHANGE_MS);
    const loadedChanges = feeder.changes.filter((c) => c.written_at >= loadStart && c.written_at < loadEnd - CHANGE_MS);
    const quiet = latencies(quietChanges, reports, ok);
    const loaded = latencies(loadedChanges, reports, ok);
    const lagQuiet = await lagDuring(probeUrl, quietChanges, reports);
    const lagLoaded = await lagDuring(probeUrl, loadedChanges, reports);

    // The anchors, by the same client processes, with nerkh stopped: the machine is theirs alone.
    const sample = (await (await fetch(`${base}/v1/rates/usd_free`, { headers: detailHeaders })).json()) as { rates: unknown[] };
    const rate = JSON.stringify(sample.rates[0]);
    server.child.kill('SIGKILL');
    await resetClients(clients);
    const anchors: AnchorResult[] = [];
    if (withAnchors) {
      const setup = {
        clients,
        children,
        work,
        streams: STREAMS,
        changes: QUIET_SECONDS,
        // nerkh's `rates` event for one changed rate, with the version the anchors' readers need in the data.
        data: (version: number) => `{"version":${version},"generated_at":"${new Date().toISOString()}","rates":[${rate}]}`,
      };
      anchors.push(await bareAnchor(setup));
      const nchan = await nchanAnchor(setup);
      if (nchan) anchors.push(nchan);
      else console.log('nchan: nginx with libnginx-mod-nchan is not installed here; left out');
    }
    for (const client of clients) client.child.send({ type: 'close' });
    const result = {
      at: new Date().toISOString(),
      // Other work on the machine moves every figure here: the 1-minute load average at the start and the end.
      load_average: [round1(loadStart1), round1(loadavg()[0]!)],
      streams: { requested: STREAMS, open: ok, refused: failed, open_ms: openMs, client_processes: CLIENTS, keys_per_stream: KEYS.length },
      rss_mb: { before: round1(idleRss), at_streams: round1(openRss.rss), peak: round1(Math.max(openRss.peak, afterRss.peak)), after_load: round1(afterRss.rss) },
      latency_quiet: quiet,
      server_fanout_ms_quiet: fanoutMs,
      // The server's CPU time over the quiet phase per event it wrote (nerkh_stream_events_sent_total): what a
      // fan-out costs, whatever else runs on the machine. It also holds that phase's pings, rebuilds and scrapes.
      server_cpu_us_per_event: {
        events: sent,
        user: round1(((cpuAfter.user - cpuBefore.user) * 1000) / Math.max(1, sent)),
        system: round1(((cpuAfter.system - cpuBefore.system) * 1000) / Math.max(1, sent)),
      },
      latency_under_load: loaded,
      // bench/lag-probe.mjs inside the server: its loop's lag from each change being ready to its last receipt.
      lag_during_fanout_quiet: lagQuiet,
      lag_during_fanout_under_load: lagLoaded,
      anchors,
      detail_without_streams: without,
      detail_with_streams: withStreams,
      dropped: Number(/^nerkh_stream_subscribers_dropped_total\{reason="buffer"\} (\d+)/m.exec(metrics)?.[1] ?? 0) + Number(/^nerkh_stream_subscribers_dropped_total\{reason="stalled"\} (\d+)/m.exec(metrics)?.[1] ?? 0),
      open_at_end: Number(/^nerkh_streams_open (\d+)/m.exec(metrics)?.[1] ?? NaN),
      target_met: false,
    };
    const bare = anchors.find((anchor) => anchor.name === 'bare');
    result.target_met =
      ok === STREAMS && quiet.p99_ms !== null && bare?.latency.p99_ms != null && quiet.p99_ms <= BARE_FACTOR * bare.latency.p99_ms && lagQuiet.p99_ms !== null && lagQuiet.p99_ms <= LAG_P99_MS && openRss.rss <= 400;
    print(result);
    if (write) {
      const out = join(ROOT, 'bench', 'results', 'stream.json');
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
      console.log(`results written to ${out}`);
    }
    return result;
  } finally {
    cleanup();
  }
}

function summarise(pairs: { baseline: Measurement; detail: Measurement }[]) {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    baseline_rps: Math.round(mean(pairs.map((p) => p.baseline.rps))),
    detail_rps: Math.round(mean(pairs.map((p) => p.detail.rps))),
    detail_p99_ms: Number(median(pairs.map((p) => p.detail.p99Ms)).toFixed(2)),
    non_2xx: pairs.reduce((sum, p) => sum + p.detail.non2xx, 0),
    // Each round against the baseline round just before it; the median shrugs off a busy round.
    ratio: Number(median(pairs.map((p) => p.detail.rps / p.baseline.rps)).toFixed(3)),
  };
}

function print(result: {
  load_average: number[];
  streams: { open: number; open_ms: number };
  rss_mb: { before: number; at_streams: number; peak: number };
  latency_quiet: ReturnType<typeof latencies>;
  server_cpu_us_per_event: { events: number; user: number; system: number };
  server_fanout_ms_quiet: { mean: number; max: number };
  latency_under_load: ReturnType<typeof latencies>;
  lag_during_fanout_quiet: Lag;
  lag_during_fanout_under_load: Lag;
  anchors: AnchorResult[];
  detail_without_streams: ReturnType<typeof summarise>;
  detail_with_streams: ReturnType<typeof summarise>;
  dropped: number;
  target_met: boolean;
}) {
  const line = (label: string, l: ReturnType<typeof latencies>) =>
    console.log(
      `${label.padEnd(34)} p50 ${String(l.p50_ms).padStart(4)} ms  p99 ${String(l.p99_ms).padStart(4)} ms  max ${String(l.max_ms).padStart(4)} ms  (${l.events} events of ${l.matched} changes, ${l.merged} merged into the next, ${l.missing} missing; ` +
        `one change's p99: best ${l.p99_of_one_change_ms.best}, median ${l.p99_of_one_change_ms.median}, worst ${l.p99_of_one_change_ms.worst} ms)`,
    );
  const detail = (label: string, d: ReturnType<typeof summarise>) =>
    console.log(`${label.padEnd(34)} ${String(d.detail_rps).padStart(7)} req/s  ratio ${d.ratio.toFixed(3)} to baseline (${d.baseline_rps} req/s)  p99 ${d.detail_p99_ms} ms  non-2xx ${d.non_2xx}`);
  console.log('');
  console.log(`push stream, ${result.streams.open} streams on one process (opened in ${result.streams.open_ms} ms; load average ${result.load_average.join(' → ')})`);
  line('delivery latency, quiet', result.latency_quiet);
  line('delivery latency, under detail load', result.latency_under_load);
  for (const anchor of result.anchors) line(`${anchor.name}, same clients (${anchor.open} streams)`, anchor.latency);
  const lag = (label: string, l: Lag | null) =>
    l &&
    console.log(
      `${label.padEnd(34)} p50 ${l.p50_ms} ms  p99 ${l.p99_ms} ms  max ${l.max_ms} ms  (${l.samples} samples over ${l.window_ms} ms of fan-out; ` +
        `less waiting for a CPU: p99 ${l.own.p99_ms} ms, max ${l.own.max_ms} ms; GC: ${l.gc.pauses} pauses, longest ${l.gc.max_ms} ms)`,
    );
  lag('loop lag during fan-out, quiet', result.lag_during_fanout_quiet);
  lag('loop lag during fan-out, loaded', result.lag_during_fanout_under_load);
  for (const anchor of result.anchors) lag(`${anchor.name}'s loop lag during fan-out`, anchor.lag);
  console.log(`${'server: one event to every stream'.padEnd(34)} mean ${result.server_fanout_ms_quiet.mean} ms, max ${result.server_fanout_ms_quiet.max} ms (the write loop, timed in the server; quiet phase)`);
  const cpu = result.server_cpu_us_per_event;
  console.log(`${'server CPU per event delivered'.padEnd(34)} ${(cpu.user + cpu.system).toFixed(1)} µs (user ${cpu.user}, system ${cpu.system}; quiet phase, ${cpu.events} events)`);
  console.log(`${'server RSS'.padEnd(34)} ${result.rss_mb.at_streams} MB at ${result.streams.open} streams (${result.rss_mb.before} MB before, peak ${result.rss_mb.peak} MB); ${result.dropped} subscribers dropped`);
  detail('detail without streams', result.detail_without_streams);
  detail('detail with streams open', result.detail_with_streams);
  console.log(`stream target (all open, quiet p99 ≤ ${BARE_FACTOR}× the bare fan-out's, loop lag p99 during fan-out ≤ ${LAG_P99_MS} ms, RSS ≤ 400 MB): ${result.target_met ? 'met' : 'NOT met'}`);
}

function environment(work: string): NodeJS.ProcessEnv {
  const unlimited = { requests_per_minute: 1_000_000_000, requests_per_day: null, max_references: null };
  const config = {
    sources: ['alpha', 'beta', 'gamma'].map((name) => ({ name, type: 'file', path: join(work, 'sources', `${name}.json`), max_age_seconds: 86_400, poll_seconds: 1 })),
    plans: {
      bench: { ...unlimited, services: ['detail'], refresh_interval_seconds: 0 },
      // Live tier (0 s), so an event leaves at the push, not at the next boundary: the bench times the push itself.
      board: { ...unlimited, services: ['stream'], refresh_interval_seconds: 0, max_streams: 100_000 },
    },
  };
  writeFileSync(join(work, 'config.json'), JSON.stringify(config));
  return { ...process.env, NERKH_DATA_DIR: join(work, 'data'), NERKH_CONFIG: join(work, 'config.json'), NERKH_LOG_LEVEL: 'warn', NERKH_PORT: String(18_000 + Math.floor(Math.random() * 20_000)), NERKH_HOST: '127.0.0.1' };
}

/** Two accounts through the real store: one for detail requests, one whose plan allows the streams. */
async function seed(env: NodeJS.ProcessEnv, storeModule: string): Promise<{ detail: string; stream: string }> {
  const { Store } = (await import(storeModule)) as typeof import('../src/store/store.js');
  const store = await Store.open({ databaseUrl: null, dataDir: env.NERKH_DATA_DIR! });
  try {
    const keyOf = async (name: string, plan: string) => (await store.keys.issue((await store.accounts.create(name, plan)).id, { label: 'bench' })).key;
    return { detail: await keyOf('bench', 'bench'), stream: await keyOf('board', 'board') };
  } finally {
    await store.close();
  }
}

/** The bare node:http server answering with the exact bytes and headers of one real detail response. */
async function startBaseline(work: string, url: string, headers: Record<string, string>, children: ChildProcess[]): Promise<string> {
  const sample = await fetch(url, { headers });
  if (sample.status !== 200) throw new Error(`detail answered ${sample.status}: ${await sample.text()}`);
  // The same flat [name, value, …] list the main bench's baseline (b) writes.
  const sampleHeaders: string[] = [];
  sample.headers.forEach((value, name) => {
    if (!['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) sampleHeaders.push(name, value);
  });
  writeFileSync(join(work, 'body.json'), Buffer.from(await sample.arrayBuffer()));
  writeFileSync(join(work, 'headers.json'), JSON.stringify(sampleHeaders));
  const port = await freePort();
  await startChild(children, process.execPath, [join(ROOT, 'bench', 'baseline-server.mjs'), String(port), join(work, 'body.json'), join(work, 'headers.json'), 'flat'], {}, /baseline listening/);
  return `http://127.0.0.1:${port}${new URL(url).pathname}`;
}

async function startFeeder(work: string, metricsUrl: string, children: ChildProcess[]): Promise<{ child: ChildProcess; changes: Change[] }> {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'stream-feeder.mjs'), join(work, 'sources', 'alpha.json'), metricsUrl, String(CHANGE_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const changes: Change[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => changes.push(JSON.parse(line) as Change));
  return { child, changes };
}

const scrape = async (base: string) => (await fetch(`${base}/metrics`)).text();
const gauge = (metrics: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (n: number) => Number(n.toFixed(1));

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await streamBench();
