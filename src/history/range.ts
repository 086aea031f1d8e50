import { ApiError } from '../domain/errors.js';
import { gregorianOfJalali } from '../domain/jalali.js';
import { isCalendarDate, parseIsoDateTime } from '../domain/time.js';
import { INTERVALS, type Buckets, type Interval } from './buckets.js';

/** At most this many candles per request. */
export const MAX_CANDLES = 1000;
/** Defaults: this many candles back from `to`. */
export const DEFAULT_CANDLES = 30;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** Years below this are Solar Hijri (Jalali): 1405 is Jalali, 2026 Gregorian. */
const FIRST_GREGORIAN_YEAR = 1700;
const FORMS = 'a date (2026-11-01), a Jalali date (1405-08-10) or a date-time with an offset (2026-11-01T10:00:00+03:30)';

/** A point in time as a caller wrote it: an instant, or a calendar day in the zone. */
export type TimeInput = { instant: number } | { day: [number, number, number] };

/** `2026-11-01`, `1405-08-10` (Jalali) or `2026-11-01T10:00:00+03:30`; the error names the parameter. */
export function parseTimeInput(name: string, text: string): TimeInput {
  const input = readTimeInput(text);
  if ('error' in input) throw invalid(name, input.error);
  return input;
}

/** The same, with the reason instead of an error (for the CSV import, which reports by line). */
export function readTimeInput(text: string): TimeInput | { error: string } {
  const date = DATE.exec(text);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    if (year < FIRST_GREGORIAN_YEAR) {
      const gregorian = gregorianOfJalali(year, month, day);
      return gregorian ? { day: gregorian } : { error: `${JSON.stringify(text)} is not a date of the Jalali calendar` };
    }
    return isCalendarDate(year, month, day) ? { day: [year, month, day] } : { error: `${JSON.stringify(text)} is not a calendar date` };
  }
  const parsed = parseIsoDateTime(text, true);
  return parsed ? { instant: parsed.ms } : { error: `${JSON.stringify(text.slice(0, 40))} is not ${FORMS}` };
}

export interface HistoryQuery {
  interval?: string;
  from?: string;
  to?: string;
}

/** The candles a history request asks for: those starting in [from, to). */
export interface HistoryRange {
  interval: Interval;
  from: number;
  to: number;
  /** Whether the caller gave `from` (a default `from` is cut to the plan's window instead of refused). */
  fromGiven: boolean;
  /** How many candle intervals the range spans (empty ones included). */
  slots: number;
}

/**
 * Read `interval`, `from` and `to`: a day means the whole day in the zone;
 * `from` is taken back to the start of its candle and `to` forward to the
 * end of its candle, so the candles holding either end are included.
 * Defaults: `1d`, up to now, 30 candles. Too wide a range, or minute-based
 * candles older than the minute retention, are refused naming the parameter.
 */
export function parseHistoryRange(query: HistoryQuery, now: number, buckets: Buckets, minuteRetentionStart: number, maxCandles = MAX_CANDLES): HistoryRange {
  const interval = (query.interval ?? '1d') as Interval;
  if (!INTERVALS.includes(interval)) throw new ApiError('INVALID_PARAMETER', `Query parameter "interval" must be one of: ${INTERVALS.join(', ')}.`);
  const toInput = query.to === undefined ? { instant: now } : parseTimeInput('to', query.to);
  const end = 'instant' in toInput ? toInput.instant + 1 : buckets.startOfDate(toInput.day[0], toInput.day[1], toInput.day[2] + 1);
  const last = buckets.start(end - 1, interval);
  const to = buckets.next(last, interval);
  let from: number;
  if (query.from === undefined) {
    from = buckets.back(last, interval, DEFAULT_CANDLES - 1);
  } else {
    const fromInput = parseTimeInput('from', query.from);
    const at = 'instant' in fromInput ? fromInput.instant : buckets.startOfDate(...fromInput.day);
    from = buckets.start(at, interval);
  }
  if (from >= to) throw invalid('from', 'it must be before "to"');
  const slots = buckets.count(from, to, interval, maxCandles);
  if (slots > maxCandles) {
    const most = maxCandles.toLocaleString('en');
    throw new ApiError('INVALID_PARAMETER', `Query parameter "from" is too far from "to": the range holds more than ${most} candles of ${interval} (at most ${most} per request); narrow the range or use a longer interval.`);
  }
  if ((interval === '1m' || interval === '5m' || interval === '15m') && from < minuteRetentionStart) {
    throw new ApiError('INVALID_PARAMETER', `Query parameter "interval" is invalid for this range: ${interval} candles are kept only from ${buckets.time.format(minuteRetentionStart)}; use 1h or longer for older ranges.`);
  }
  return { interval, from, to, fromGiven: query.from !== undefined, slots };
}

/**
 * `at=`: an instant, or for a date the end of that day (the day's closing
 * values); never in the future.
 */
export function parseAt(text: string, now: number, buckets: Buckets): number {
  const input = parseTimeInput('at', text);
  const at = 'instant' in input ? input.instant : Math.min(now, buckets.startOfDate(input.day[0], input.day[1], input.day[2] + 1) - 1);
  if (at > now) throw invalid('at', 'it lies in the future');
  return at;
}

/**
 * The first instant a plan's `history_days` lets a caller see: local midnight
 * `days` days before today (0: today only); null when unlimited.
 */
export function windowStart(historyDays: number | null, now: number, buckets: Buckets): number | null {
  if (historyDays === null) return null;
  const [year, month, day] = buckets.localDate(now);
  return buckets.startOfDate(year, month, day - historyDays);
}

/**
 * The range cut to the plan's window: a `from` the caller gave that lies
 * before it is refused (403); a default one is moved up to it.
 */
export function withinWindow(range: HistoryRange, historyDays: number | null, now: number, buckets: Buckets): HistoryRange {
  const start = windowStart(historyDays, now, buckets);
  if (start === null || range.from >= start) return range;
  if (range.fromGiven) throw windowExceeded(historyDays!, start, buckets);
  const first = buckets.start(start, range.interval);
  return { ...range, from: first >= start ? first : buckets.next(first, range.interval) };
}

/** `at` inside the plan's window, or 403. */
export function checkAtWindow(at: number, historyDays: number | null, now: number, buckets: Buckets): void {
  const start = windowStart(historyDays, now, buckets);
  if (start !== null && at < start) throw windowExceeded(historyDays!, start, buckets);
}

function windowExceeded(historyDays: number, start: number, buckets: Buckets): ApiError {
  return new ApiError(
    'HISTORY_WINDOW_EXCEEDED',
    `Your plan's history reaches back ${historyDays} day${historyDays === 1 ? '' : 's'}, to ${buckets.time.format(start).slice(0, 10)}; ask for a later "from" or "at".`,
  );
}

function invalid(name: string, why: string): ApiError {
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is invalid: ${why}.`);
}
