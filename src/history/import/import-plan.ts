import { addPoint, candleOf, rollUp, type Candle } from '../../domain/candle.js';
import type { Buckets } from '../ranges/buckets.js';
import { IMPORT_SOURCE, type ParsedImport, type Point } from './import-read.js';

/**
 * One reference's part of one local day in a file: the unit an import
 * checks and writes in one go, so a day's hours and the day itself are
 * always rebuilt with all of its minutes at hand.
 */
export interface ImportDay {
  reference: string;
  /** Start of the local day. */
  start: number;
  /** The file's rows in it. */
  rows: number;
  /** The file's minute candles (none for a daily file). */
  minutes: Candle[];
  /** The file's minutes rolled up per hour (none for a daily file). */
  hours: Candle[];
  /** The day: the file's minutes rolled up, or the daily file's candle. */
  daily: Candle;
}

/** A checked file as days to write, each reference in time order. */
export function planImport(parsed: ParsedImport, buckets: Buckets): ImportDay[] {
  if (parsed.format === 'daily') {
    // Each reference's days together and in order: a transaction reads one range per reference.
    const sorted = [...parsed.days].sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : a.candle.start - b.candle.start));
    return sorted.map(({ reference, candle }) => ({ reference, start: candle.start, rows: 1, minutes: [], hours: [], daily: candle }));
  }
  const days: ImportDay[] = [];
  const hourOf = buckets.bucketer('1h');
  const dayOf = buckets.bucketer('1d');
  for (const [reference, points] of parsed.points) {
    // In time order; values of the same time keep the file's order (the sort is stable).
    points.sort((a, b) => a.at - b.at);
    let from = 0;
    while (from < points.length) {
      const start = dayOf(points[from]!.at);
      const end = buckets.next(start, '1d');
      let to = from;
      while (to < points.length && points[to]!.at < end) to++;
      const minutes = minuteCandles(points.slice(from, to), buckets);
      days.push({ reference, start, rows: to - from, minutes, hours: rollUp(minutes, hourOf), daily: rollUp(minutes, dayOf)[0]! });
      from = to;
    }
  }
  return days;
}

/** Points in time order into minute candles. */
function minuteCandles(points: Point[], buckets: Buckets): Candle[] {
  const out: Candle[] = [];
  let current: Candle | null = null;
  for (const { at, value } of points) {
    const start = buckets.start(at, '1m');
    if (current && current.start === start) addPoint(current, value, IMPORT_SOURCE, at);
    else out.push((current = candleOf(start, value, IMPORT_SOURCE, at)));
  }
  return out;
}
