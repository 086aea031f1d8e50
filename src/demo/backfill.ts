import { readFileSync } from 'node:fs';
import type { Catalogue } from '../catalogue/catalogue.js';
import { rollUp, type Candle, type StoredCandle } from '../domain/candle.js';
import { threadCpuMs } from '../domain/thread-cpu.js';
import type { ZoneTime } from '../domain/time.js';
import { Buckets } from '../history/ranges/buckets.js';
import type { Logger } from '../log.js';
import type { HistoryRepository } from '../store/candle-tables.js';
import { gaussian, LEVELS_FILE, roundLike } from './feeder.js';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** How far back the demo's past goes: daily candles for all of it. */
export const BACKFILL_DAYS = 30;
/** Hourly candles for the last week, minute candles for the last two hours: enough for every chart. */
const HOURLY_DAYS = 7;
const MINUTE_HOURS = 2;
/** The longest rest between two chunks. */
const MAX_REST_MS = 100;
/** The feeder writes every 2 s: about this many values a minute. */
const POINTS_PER_MINUTE = 30;

export interface BackfillOptions {
  /** Where the past ends: the moment recording begins (default now). */
  until?: number;
  random?: () => number;
  /** The writing leader's lease epoch: the past's writes are fenced like the recorder's (null: not fenced). */
  epoch?: number | null;
  /** Asked between chunks: true stops the backfill (the process is closing). */
  stopped?: () => boolean;
}

/** What a backfill wrote, and the longest it held the event loop (the main thread's CPU time in its longest chunk, which no busy machine inflates). */
export interface BackfillSummary {
  candles: number;
  chunks: number;
  longestChunkCpuMs: number;
}

/** A believable past for the demo, written only into an empty history; null when the history was not empty. */
export async function backfillDemoHistory(repository: HistoryRepository, catalogue: Catalogue, time: ZoneTime, logger: Logger, options: BackfillOptions = {}): Promise<BackfillSummary | null> {
  if (!(await repository.isEmpty())) return null;
  return writeDemoPast(repository, catalogue, time, logger, options);
}

/**
 * A mean-reverting walk backwards from each item's demo level (where the
 * feeder starts), in day steps for 30 days, hour steps for the last week and
 * minute steps for the last two hours. Hourly and daily candles are rolled
 * up from the steps below them, as the recorder would, so charts and
 * `change` have something to show from the first start. Values are rounded
 * as the feeder rounds them.
 *
 * It runs beside a serving process, so it never holds the event loop long:
 * one reference at a time (a few hundred candles, one transaction, a few
 * milliseconds), then a rest as long as the chunk took, so requests, timers
 * and sockets get at least half of the loop meanwhile. The caller checks
 * that the history was empty before anything was recorded.
 *
 * The candles go through the history repository like any other writer's: a
 * recorder that starts before the past is written loads it once it is
 * there (`HistoryRecorder.load`) and continues its current candles, as after
 * a restart, and hands the engine the market days it read.
 */
export async function writeDemoPast(repository: HistoryRepository, catalogue: Catalogue, time: ZoneTime, logger: Logger, options: BackfillOptions = {}): Promise<BackfillSummary | null> {
  const random = options.random ?? Math.random;
  const started = performance.now();
  const levels = JSON.parse(readFileSync(LEVELS_FILE, 'utf8')) as Record<string, number>;
  const buckets = new Buckets(time);
  const until = options.until ?? time.now();
  // Minute steps for the last two hours, hour steps back to a week ago, day steps back to 30 days ago.
  const thisMinute = buckets.start(until, '1m');
  const minuteStarts = steps(thisMinute - MINUTE_HOURS * HOUR, thisMinute, (at) => at + MINUTE);
  const hourlyFrom = buckets.start(until - HOURLY_DAYS * DAY, '1d');
  const hourStarts = steps(hourlyFrom, minuteStarts[0]!, (at) => buckets.next(at, '1h'));
  const dayStarts = steps(buckets.start(until - BACKFILL_DAYS * DAY, '1d'), hourlyFrom, (at) => buckets.next(at, '1d'));
  const summary: BackfillSummary = { candles: 0, chunks: 0, longestChunkCpuMs: 0 };

  for (const reference of catalogue.references) {
    if (options.stopped?.()) return null;
    const began = performance.now();
    const cpuBefore = threadCpuMs();
    const level = levels[reference.source_key];
    if (level === undefined) continue;
    const text = (value: number) => String(roundLike(value, level));
    // Walk back from the level (where the feeder starts): minutes, then hours from the oldest minute, then days.
    const minutePath = walkBack(level, level, minuteStarts.length, 0.0006, 0.02, random);
    const hourPath = walkBack(minutePath[minutePath.length - 1]!, level, hourStarts.length, 0.003, 0.01, random);
    const dayPath = walkBack(hourPath[hourPath.length - 1]!, level, dayStarts.length, 0.012, 0.05, random);
    const minutes = candles(minuteStarts, minutePath.reverse(), MINUTE, POINTS_PER_MINUTE, text, random);
    const hourSteps = candles(hourStarts, hourPath.reverse(), HOUR, POINTS_PER_MINUTE * 60, text, random);
    const daySteps = candles(dayStarts, dayPath.reverse(), DAY, POINTS_PER_MINUTE * 1440, text, random);
    const hourly = rollUp([...hourSteps, ...minutes], buckets.bucketer('1h'));
    const daily = rollUp([...daySteps, ...hourly], buckets.bucketer('1d'));
    const rows: StoredCandle[] = [];
    for (const candle of minutes) rows.push({ grain: 'minute', reference: reference.key, candle });
    for (const candle of hourly) rows.push({ grain: 'hour', reference: reference.key, candle });
    for (const candle of daily) rows.push({ grain: 'day', reference: reference.key, candle });
    // The settled past changes: readers' caches of it look again.
    // Fenced like the recorder's own writes: a leadership that lost its lease stops here.
    const written = repository.write(rows, true, options.epoch ?? null);
    // Up to the write's first wait: with SQLite, the whole chunk.
    const usedMs = threadCpuMs() - cpuBefore;
    await written;
    summary.candles += rows.length;
    summary.chunks++;
    summary.longestChunkCpuMs = Math.max(summary.longestChunkCpuMs, usedMs);
    // Rest as long as the chunk took: at most half of the event loop goes to the past, the rest to serving.
    await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_REST_MS, performance.now() - began)));
  }
  logger.info({ part: 'demo', ...summary, ms: Math.round(performance.now() - started) }, `demo: history backfilled for the last ${BACKFILL_DAYS} days`);
  return summary;
}

/** Starts from `first` up to (not including) `end`. */
function steps(first: number, end: number, next: (at: number) => number): number[] {
  const out: number[] = [];
  for (let at = first; at < end; at = next(at)) out.push(at);
  return out;
}

/** One candle per step, each opening at the close before it. */
function candles(starts: number[], closes: number[], length: number, points: number, text: (value: number) => string, random: () => number): Candle[] {
  return starts.map((start, i) => candle(start, length, closes[i]!, closes[i - 1] ?? closes[i]!, points, text, random));
}

/** `steps` prices walking back from `from`, each pulled towards `level` by `pull` and shaken by `sigma` (relative). */
function walkBack(from: number, level: number, steps: number, sigma: number, pull: number, random: () => number): number[] {
  const out: number[] = [];
  let price = from;
  for (let i = 0; i < steps; i++) {
    out.push(price);
    price = Math.max(level * 0.5, price + pull * (level - price) + price * sigma * gaussian(random));
  }
  return out;
}

/** A candle from `open` to `close` with a little wick either side. */
function candle(start: number, length: number, close: number, open: number, points: number, text: (value: number) => string, random: () => number): Candle {
  const spread = Math.abs(close - open) * 0.5 + close * 0.0004 * random();
  const values = [text(open), text(Math.max(open, close) + spread), text(Math.min(open, close) - spread), text(close)];
  const [o, h, l, c] = values as [string, string, string, string];
  // Rounding may put a wick inside the body: high and low are the extremes of the four (generated numbers, not served ones).
  const sorted = [o, h, l, c].map(Number);
  const high = values[sorted.indexOf(Math.max(...sorted))]!;
  const low = values[sorted.indexOf(Math.min(...sorted))]!;
  return { start, open: o, high, low, close: c, points, source: 'demo-alpha', closeAt: start + length - 2000 };
}
