import type { Candle } from '../domain/candle.js';
import { asciiDigits } from '../domain/digits.js';
import { ApiError } from '../domain/errors.js';
import type { RateTime } from '../domain/rate.js';
import type { Buckets } from '../history/ranges/buckets.js';
import { MAX_CANDLES, parseTimeInput, type HistoryRange, type TimeInput } from '../history/ranges/range-query.js';
import type { PeerUnit } from './peer-unit.js';
import { navasanDate, unixSeconds } from './peer-time.js';

/** Unix seconds, as navasan's clients send them (up to the year 33658). */
const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * One bound of `ohlcSearch`: unix seconds, or a date as history takes it
 * (Jalali `1405-08-10` or `1405/08/10`, Gregorian `2026-11-01`, a date-time
 * with an offset), in ASCII, Persian or Arabic-Indic digits; the error names
 * the parameter.
 */
export function readBound(name: string, text: string): TimeInput {
  const ascii = asciiDigits(text.trim());
  if (UNIX_SECONDS.test(ascii)) return { instant: Number(ascii) * 1000 };
  return parseTimeInput(name, text.trim());
}

/**
 * The daily candles `start` … `end` ask for, both days included (an instant
 * takes the day that holds it): checked as history checks its range (not
 * starting in the future, start before end, at most 1,000 candles). An end
 * past today is today.
 */
export function ohlcRange(start: string, end: string, now: number, buckets: Buckets): HistoryRange {
  const first = readBound('start', start);
  const last = readBound('end', end);
  const firstAt = 'instant' in first ? first.instant : buckets.startOfDate(...first.day);
  // A start after today lies in the future: checked before the calendar reads it, which has no day past the year 9999 (12 digits of unix seconds reach 33658).
  if (firstAt >= buckets.next(buckets.start(now, '1d'), '1d')) throw invalid('start', 'it lies in the future');
  const from = buckets.start(firstAt, '1d');
  const lastDay = buckets.start(Math.min('instant' in last ? last.instant : buckets.startOfDate(...last.day), now), '1d');
  if (from > lastDay) throw invalid('start', 'it must not be after "end"');
  const to = buckets.next(lastDay, '1d');
  const slots = buckets.count(from, to, '1d', MAX_CANDLES);
  if (slots > MAX_CANDLES) throw invalid('start', `the range holds more than ${MAX_CANDLES.toLocaleString('en')} days; narrow it`);
  return { interval: '1d', from, to, fromGiven: true, slots };
}

/** navasan's candles: `[{"timestamp", "date", "open", "high", "low", "close"}, …]`, oldest first, values exact strings in the item's unit. */
export function renderNavasanCandles(candles: readonly Candle[], unit: PeerUnit, time: RateTime): string {
  let body = '';
  for (const candle of candles) {
    body +=
      `${body === '' ? '' : ','}{"timestamp":${unixSeconds(candle.start)},"date":"${navasanDate(time, candle.start)}"` +
      `,"open":"${unit.of(candle.open)}","high":"${unit.of(candle.high)}","low":"${unit.of(candle.low)}","close":"${unit.of(candle.close)}"}`;
  }
  return `[${body}]`;
}

function invalid(name: string, why: string): ApiError {
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is invalid: ${why}.`);
}
