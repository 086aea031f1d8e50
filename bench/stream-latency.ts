/** What the stream bench computes from the receipts: delivery latency per event, and the server's loop lag while it fans out. */
import type { ClientReport } from './stream-clients.js';

/** One published change: when it was written or sent, its event id, and when the server had it ready (null when not matched). */
export interface Change {
  written_at: number;
  version: number | null;
  built_at: number | null;
}

export type Latencies = ReturnType<typeof latencies>;

/**
 * Latency of every delivered event of the given changes; missing counts streams that never got one.
 * A change that came while the one before was still being written leaves in the next event, with
 * whatever else changed meanwhile (nerkh's hub): its receipt is that event's, and it counts as merged.
 */
export function latencies(changes: Change[], reports: ClientReport[], streams: number) {
  const values: number[] = [];
  // Each change's own p99: how far one fan-out's tail reaches, change by change.
  const perChange: number[] = [];
  const received = [...new Set(reports.flatMap((report) => Object.keys(report.receipts).map(Number)))].sort((a, b) => a - b);
  let matched = 0;
  let merged = 0;
  let missing = 0;
  for (const change of changes) {
    if (change.version === null || change.built_at === null) continue;
    matched++;
    const carrier = received.find((version) => version >= change.version!);
    if (carrier !== undefined && carrier !== change.version) merged++;
    const own: number[] = [];
    for (const report of reports) {
      for (const at of report.receipts[String(carrier)] ?? []) own.push(at - change.built_at);
    }
    missing += streams - own.length;
    values.push(...own);
    if (own.length > 0) perChange.push(quantile(own.sort((a, b) => a - b), 0.99)!);
  }
  values.sort((a, b) => a - b);
  perChange.sort((a, b) => a - b);
  return {
    changes: changes.length,
    matched,
    merged,
    events: values.length,
    missing,
    p50_ms: quantile(values, 0.5),
    p99_ms: quantile(values, 0.99),
    max_ms: quantile(values, 1),
    p99_of_one_change_ms: { best: quantile(perChange, 0), median: quantile(perChange, 0.5), worst: quantile(perChange, 1) },
  };
}

const WINDOW_TAIL_MS = 5;

export interface Lag {
  /** Probe samples taken inside the fan-out windows. */
  samples: number;
  /** The windows, summed: from each change being ready to its last receipt. */
  window_ms: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  /**
   * The same samples less the time the server's main thread waited for a CPU
   * meanwhile: the lag its own work made. On a machine with more runnable
   * work than cores the two part ways; on a quiet one they agree.
   */
  own: { p50_ms: number | null; p99_ms: number | null; max_ms: number | null };
  /** Garbage-collection pauses that started in the windows: how many, the longest, and all summed. */
  gc: { pauses: number; max_ms: number; total_ms: number };
}

/**
 * The server's event-loop lag during its fan-outs, from bench/lag-probe.mjs
 * inside it: the samples taken from each change being ready on the server to
 * the last stream receiving it, and a few ms after (a loop held to the end
 * shows in the sample taken once it is free, which may come after a fast
 * reader's receipt).
 */
export async function lagDuring(probeUrl: string, changes: Change[], reports: ClientReport[]): Promise<Lag> {
  const values: number[] = [];
  const own: number[] = [];
  const gc = { pauses: 0, max_ms: 0, total_ms: 0 };
  let windowMs = 0;
  for (const [from, to] of fanoutWindows(changes, reports)) {
    windowMs += to - from;
    const samples = (await (await fetch(`${probeUrl}/?from=${from}&to=${to + WINDOW_TAIL_MS}`)).json()) as [number, number][];
    for (const [lag, waited] of samples) {
      values.push(lag);
      own.push(Math.round((lag - waited) * 100) / 100);
    }
    for (const [ms] of (await (await fetch(`${probeUrl}/gc?from=${from}&to=${to}`)).json()) as [number, number][]) {
      gc.pauses++;
      gc.max_ms = Math.max(gc.max_ms, ms);
      gc.total_ms = Math.round((gc.total_ms + ms) * 100) / 100;
    }
  }
  values.sort((a, b) => a - b);
  own.sort((a, b) => a - b);
  return {
    samples: values.length,
    window_ms: windowMs,
    p50_ms: quantile(values, 0.5),
    p99_ms: quantile(values, 0.99),
    max_ms: quantile(values, 1),
    own: { p50_ms: quantile(own, 0.5), p99_ms: quantile(own, 0.99), max_ms: quantile(own, 1) },
    gc,
  };
}

/** Each change's fan-out as the clients saw it: from the change being ready on the server to its last receipt (epoch ms). */
export function fanoutWindows(changes: Change[], reports: ClientReport[]): [number, number][] {
  const windows: [number, number][] = [];
  for (const change of changes) {
    if (change.version === null || change.built_at === null) continue;
    let last = -Infinity;
    for (const report of reports) for (const at of report.receipts[String(change.version)] ?? []) last = Math.max(last, at);
    if (last !== -Infinity) windows.push([change.built_at, last]);
  }
  return windows;
}

export function quantile(sorted: number[], q: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
