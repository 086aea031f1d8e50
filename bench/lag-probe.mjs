// Event-loop lag inside a measured server, preloaded with `node --import`: a 1 ms timer chain
// records, each time it fires, how late it fired (wall time since the last firing, less the 1 ms
// asked for) and when (Date.now(), the clock the stream bench times events with). A loop held
// for 200 ms shows as one 200 ms sample; a loop that yields every 3 ms as many samples of 3 ms or less.
// The bench asks for the samples of a time window (the fan-outs), which a process-wide histogram
// (monitorEventLoopDelay, prom-client's nodejs_eventloop_lag_*) cannot give: over a whole second
// a 200 ms block is one sample in a thousand, below any p99.
// On a shared machine part of a sample is the main thread waiting for a CPU, which no code in the
// process can shorten: each sample also keeps that wait (Linux schedstat), so the bench can tell
// the two apart.
// Garbage-collection pauses are kept too (perf_hooks 'gc' entries), to tell what else held the loop.
// Env: NERKH_BENCH_PROBE_PORT. GET /?from=<ms>&to=<ms> answers the samples taken in [from, to]
// as a JSON array of [lag ms, of which waiting for a CPU ms]; GET /gc?from=<ms>&to=<ms> the pauses
// that started in [from, to] as [duration ms, kind] (kind: perf_hooks.constants.NODE_PERFORMANCE_GC_*).
import { openSync, readSync } from 'node:fs';
import { createServer } from 'node:http';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

// Worker threads inherit `--import`: the probe watches the main thread's loop only.
if (isMainThread) startProbe();

function startProbe() {
  const CAPACITY = 1 << 18; // about four minutes at 1 kHz
  const at = new Float64Array(CAPACITY);
  const lag = new Float32Array(CAPACITY);
  const waited = new Float32Array(CAPACITY);
  let taken = 0;
  let last = performance.now();

  // The main thread's time spent runnable but not running, in ns (the second field).
  const schedstat = openSync('/proc/thread-self/schedstat', 'r');
  const buffer = Buffer.alloc(128);
  function runDelayMs() {
    const length = readSync(schedstat, buffer, 0, buffer.length, 0);
    return Number(buffer.toString('latin1', 0, length).split(' ')[1]) / 1e6;
  }
  let lastDelay = runDelayMs();

  const pauses = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      pauses.push([performance.timeOrigin + entry.startTime, entry.duration, entry.detail?.kind ?? entry.kind]);
      if (pauses.length > 100_000) pauses.splice(0, 50_000);
    }
  }).observe({ entryTypes: ['gc'] });

  function probe() {
    const now = performance.now();
    const delay = runDelayMs();
    const slot = taken++ % CAPACITY;
    at[slot] = Date.now();
    lag[slot] = Math.max(0, now - last - 1);
    waited[slot] = Math.min(lag[slot], delay - lastDelay);
    last = now;
    lastDelay = delay;
    setTimeout(probe, 1).unref();
  }
  setTimeout(probe, 1).unref();

  const server = createServer((request, response) => {
    const url = new URL(request.url, 'http://probe');
    const from = Number(url.searchParams.get('from') ?? 0);
    const to = Number(url.searchParams.get('to') ?? Infinity);
    response.writeHead(200, { 'content-type': 'application/json' });
    if (url.pathname === '/gc') {
      response.end(JSON.stringify(pauses.filter(([start]) => start >= from && start <= to).map(([, duration, kind]) => [Math.round(duration * 100) / 100, kind])));
      return;
    }
    const samples = [];
    for (let i = Math.max(0, taken - CAPACITY); i < taken; i++) {
      const slot = i % CAPACITY;
      if (at[slot] >= from && at[slot] <= to) samples.push([Math.round(lag[slot] * 100) / 100, Math.round(waited[slot] * 100) / 100]);
    }
    response.end(JSON.stringify(samples));
  });
  server.listen(Number(process.env.NERKH_BENCH_PROBE_PORT), '127.0.0.1');
  // Never keeps the process alive on its own.
  server.unref();
}
