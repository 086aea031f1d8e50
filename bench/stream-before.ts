/**
 * With BENCH_BEFORE, the stream part of `npm run bench` runs for this build and
 * for the earlier one in the same run, alternating (this, earlier, earlier,
 * this, …) so neither always meets the machine warmer or busier, and prints
 * the medians side by side. Only this build's first run measures the anchors
 * and writes bench/results/stream.json.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './processes.js';
import { runStreamBench, type StreamResult } from './stream.js';

const PAIRS = Number(process.env.BENCH_STREAM_PAIRS ?? 2);

/** The figures compared, each read from one run's result; `higher` says which way is better. */
const FIGURES: { name: string; higher: boolean; read: (r: StreamResult) => number | null }[] = [
  { name: 'delivery p99, quiet (ms)', higher: false, read: (r) => r.latency_quiet.p99_ms },
  { name: 'delivery p99, under detail load (ms)', higher: false, read: (r) => r.latency_under_load.p99_ms },
  { name: 'one event to every stream, mean (ms)', higher: false, read: (r) => r.server_fanout_ms_quiet.mean },
  { name: 'server CPU per event delivered (µs)', higher: false, read: (r) => r.server_cpu_us_per_event.user + r.server_cpu_us_per_event.system },
  { name: 'loop lag p99 during fan-out, quiet (ms)', higher: false, read: (r) => r.lag_during_fanout_quiet?.p99_ms ?? null },
  { name: 'RSS at all streams (MB)', higher: false, read: (r) => r.rss_mb.at_streams },
  { name: 'detail / baseline, no streams', higher: true, read: (r) => r.detail_without_streams.ratio },
  { name: 'detail / baseline, streams open', higher: true, read: (r) => r.detail_with_streams.ratio },
  { name: 'detail p99, streams open (ms)', higher: false, read: (r) => r.detail_with_streams.detail_p99_ms },
];

export async function streamBeforeAfter(before: string): Promise<void> {
  const runs: { after: StreamResult[]; before: StreamResult[] } = { after: [], before: [] };
  const earlier = { root: before, storeModule: pathToFileURL(join(before, 'dist', 'store', 'store.js')).href, anchors: false, write: false };
  for (let pair = 0; pair < PAIRS; pair++) {
    const order = pair % 2 === 0 ? (['after', 'before'] as const) : (['before', 'after'] as const);
    for (const build of order) {
      console.log(`\nstream bench, ${build === 'after' ? 'this build' : 'the earlier build'} (pair ${pair + 1} of ${PAIRS})`);
      const first = build === 'after' && runs.after.length === 0;
      runs[build].push(await runStreamBench(build === 'after' ? { write: first, anchors: first ? undefined : false } : earlier));
    }
  }
  console.log(`\npush stream, this build against the earlier one (${before}): medians of ${PAIRS} runs each, in the same bench run`);
  console.log(`${'figure'.padEnd(42)} ${'this'.padStart(9)} ${'earlier'.padStart(9)}  this / earlier`);
  for (const figure of FIGURES) {
    const mine = medianOf(runs.after.map(figure.read));
    const theirs = medianOf(runs.before.map(figure.read));
    const ratio = mine !== null && theirs ? (mine / theirs).toFixed(3) : 'n/a';
    const verdict = mine === null || theirs === null ? '' : (figure.higher ? mine >= theirs : mine <= theirs) ? 'not worse' : 'WORSE';
    console.log(`${figure.name.padEnd(42)} ${fmt(mine).padStart(9)} ${fmt(theirs).padStart(9)}  ${ratio} ${verdict}`);
  }
}

function medianOf(values: (number | null)[]): number | null {
  const known = values.filter((value): value is number => value !== null && Number.isFinite(value));
  return known.length === 0 ? null : median(known);
}

const fmt = (value: number | null) => (value === null ? 'n/a' : String(Number(value.toFixed(3))));
