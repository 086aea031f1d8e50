import { compareDecimal } from './decimal.js';
import { rialToToman } from './units.js';

/**
 * An OHLC candle of the values served in one interval. Values are the number
 * text exactly as served; `points` counts the values served in it, `source`
 * and `closeAt` say where the close came from and its own update time.
 */
export interface Candle {
  /** Epoch ms of the interval's start. */
  start: number;
  open: string;
  high: string;
  low: string;
  close: string;
  points: number;
  /** The source of the close; `import` for imported data. */
  source: string;
  /** Epoch ms of the close value's own `updated_at`. */
  closeAt: number;
}

/** The grains the store keeps: minute candles (kept for a while), hourly and daily rollups (kept forever). */
export type Grain = 'minute' | 'hour' | 'day';
export const GRAINS: readonly Grain[] = ['minute', 'hour', 'day'];

/** A candle of one reference at one grain, as written. */
export interface StoredCandle {
  grain: Grain;
  reference: string;
  candle: Candle;
}

/** A candle holding one value. */
export function candleOf(start: number, value: string, source: string, closeAt: number): Candle {
  return { start, open: value, high: value, low: value, close: value, points: 1, source, closeAt };
}

/** Add a value served after everything already in the candle. */
export function addPoint(candle: Candle, value: string, source: string, closeAt: number): void {
  if (value !== candle.high && compareDecimal(value, candle.high) > 0) candle.high = value;
  if (value !== candle.low && compareDecimal(value, candle.low) < 0) candle.low = value;
  candle.close = value;
  candle.points++;
  candle.source = source;
  candle.closeAt = closeAt;
}

/** Fold a later candle into an earlier one (both of the same reference): what a rollup or a coarser interval is. */
export function mergeLater(into: Candle, later: Candle): void {
  if (later.high !== into.high && compareDecimal(later.high, into.high) > 0) into.high = later.high;
  if (later.low !== into.low && compareDecimal(later.low, into.low) < 0) into.low = later.low;
  into.close = later.close;
  into.points += later.points;
  into.source = later.source;
  into.closeAt = later.closeAt;
}

/** Candles in time order folded into one per bucket, keeping the order: `bucketOf` maps a start to its bucket's start. */
export function rollUp(candles: readonly Candle[], bucketOf: (start: number) => number): Candle[] {
  const out: Candle[] = [];
  let current: Candle | null = null;
  for (const candle of candles) {
    const bucket = bucketOf(candle.start);
    if (current && current.start === bucket) {
      mergeLater(current, candle);
    } else {
      current = { ...candle, start: bucket };
      out.push(current);
    }
  }
  return out;
}

/** A rial candle in toman (`?unit=toman`): each value divided by ten exactly, on its digits. */
export function candleInToman(candle: Candle): Candle {
  return { ...candle, open: rialToToman(candle.open), high: rialToToman(candle.high), low: rialToToman(candle.low), close: rialToToman(candle.close) };
}
