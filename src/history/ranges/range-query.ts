import { asciiDigits } from '../../domain/digits.js';
import { ApiError } from '../../domain/errors.js';
import { gregorianOfJalali } from '../../domain/jalali.js';
import { isCalendarDate, parseIsoDateTime } from '../../domain/time.js';
import { INTERVALS, type Buckets, type Interval } from './buckets.js';

/** At most this many candles per request. */
export const MAX_CANDLES = 1000;
/** Defaults: this many candles back from `to`. */
export const DEFAULT_CANDLES = 30;

/** A calendar date, `-` or `/` between its parts: 2026-11-01, 1405/08/10, 1405-8-10. */
const DATE = /^(\d{4})([-/])(\d{1,2})\2(\d{1,2})$/;
/** Years below this are Solar Hijri (Jalali): 1405 is Jalali, 2026 Gregorian. */
const FIRST_GREGORIAN_YEAR = 1700;
/**
 * A date-time whose offset has a space for its sign: an unencoded `+` in a
 * query string is decoded as a space (`…T14:30:00 03:30`). Nothing else can
 * stand there, so it is read as the `+` it was.
 */
const SPACE_FOR_PLUS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}:?\d{2})$/;
const FORMS = 'a date (2026-11-01), a Jalali date (1405/08/10 or 1405-08-10) or a date-time with an offset (2026-11-01T10:00:00+03:30)';

/** A point in time as a caller wrote it: an instant, or a calendar day in the zone. */
export type TimeInput = { instant: number } | { day: [number, number, number] };

/**
 * `2026-11-01`, `1405/08/10` or `1405-08-10` (Jalali), or `2026-11-01T10:00:00+03:30`, in ASCII, Persian or
 * Arabic-Indic digits (`۱۴۰۵/۰۸/۱۹`); the error names the parameter.
 */
export function parseTimeInput(name: string, text: string): TimeInput {
  const input = readTimeInput(text);
  // An unencoded `+` arrives as a space: say so, since the text the caller sent has a `+` in it.
  if ('error' in input) throw invalid(name, text.includes(' ') ? `${input.error} (in a URL a "+" must be sent as %2B: unencoded, it arrives as a space)` : input.error);
  return input;
}

/** The same, with the reason instead of an error (for the CSV import, which reports by line). */
export function readTimeInput(written: string): TimeInput | { error: string } {
  // Reasons quote the text as written; it is matched with ASCII digits.
  const text = asciiDigits(written);
  const date = DATE.exec(text);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[3]), Number(date[4])];
    if (year < FIRST_GREGORIAN_YEAR) {
      const gregorian = gregorianOfJalali(year, month, day);
      return gregorian ? { day: gregorian } : { error: `${JSON.stringify(written)} is not a date of the Jalali calendar` };
    }
    return isCalendarDate(year, month, day) ? { day: [year, month, day] } : { error: `${JSON.stringify(written)} is not a calendar date` };
  }
  const spaced = SPACE_FOR_PLUS.exec(text);
  const parsed = parseIsoDateTime(spaced ? `${spaced[1]}+${spaced[2]}` : text, true);
  return parsed ? { instant: parsed.ms } : { error: `${JSON.stringify(written.slice(0, 40))} is not ${FORMS}` };
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
 * Defaults: `1d`, up to now, 30 candles. A `to` later than now means now (no
 * candle starts after now, so the answer is the same, and a range is never
 * read past the candle holding now); a `from` later than now is refused. Too
 * wide a range, or minute-based candles older than the minute retention, are
 * refused naming the parameter.
 */
export function parseHistoryRange(query: HistoryQuery, now: number, buckets: Buckets, minuteRetentionStart: number, maxCandles = MAX_CANDLES): HistoryRange {
  const interval = (query.interval ?? '1d') as Interval;
  if (!INTERVALS.includes(interval)) throw new ApiError('INVALID_PARAMETER', `Query parameter "interval" must be one of: ${INTERVALS.join(', ')}.`);
  const toInput = query.to === undefined ? { instant: now } : parseTimeInput('to', query.to);
  const asked = 'instant' in toInput ? toInput.instant + 1 : buckets.startOfDate(toInput.day[0], toInput.day[1], toInput.day[2] + 1);
  const end = Math.min(asked, now + 1);
  const last = buckets.start(end - 1, interval);
  const to = buckets.next(last, interval);
  let from: number;
  if (query.from === undefined) {
    from = buckets.back(last, interval, DEFAULT_CANDLES - 1);
  } else {
    const fromInput = parseTimeInput('from', query.from);
    const at = 'instant' in fromInput ? fromInput.instant : buckets.startOfDate(...fromInput.day);
    if (at > now) throw invalid('from', 'it lies in the future');
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
 * values; today's: now). Never in the future: a later instant or date is
 * refused rather than answered with today's value.
 */
export function parseAt(text: string, now: number, buckets: Buckets): number {
  const input = parseTimeInput('at', text);
  if ('instant' in input) {
    if (input.instant > now) throw invalid('at', `${text} lies in the future`);
    return input.instant;
  }
  const [year, month, day] = input.day;
  if (buckets.startOfDate(year, month, day) > now) throw invalid('at', `${text} lies in the future (today is ${buckets.time.day(now)})`);
  return Math.min(now, buckets.startOfDate(year, month, day + 1) - 1);
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
