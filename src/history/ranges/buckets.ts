import type { Grain } from '../../domain/candle.js';
import type { ZoneTime } from '../../domain/time.js';

export const INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d', '1w'] as const;
export type Interval = (typeof INTERVALS)[number];

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Intervals measured in wall-clock minutes of the zone; days and weeks follow the calendar. */
const CLOCK_SIZE: Partial<Record<Interval, number>> = { '1m': MINUTE, '5m': 5 * MINUTE, '15m': 15 * MINUTE, '1h': HOUR, '4h': 4 * HOUR };

/** Which stored grain a query interval is built from. */
export const GRAIN_OF: Record<Interval, Grain> = { '1m': 'minute', '5m': 'minute', '15m': 'minute', '1h': 'hour', '4h': 'hour', '1d': 'day', '1w': 'day' };

/** The interval a stored grain is. */
export const INTERVAL_OF = { minute: '1m', hour: '1h', day: '1d' } as const satisfies Record<Grain, Interval>;

/** The nominal length of an interval (days and weeks may be an hour off across a clock change). */
export function nominalMs(interval: Interval): number {
  return CLOCK_SIZE[interval] ?? (interval === '1d' ? DAY : 7 * DAY);
}

/**
 * Candle boundaries in the configured zone: an hour candle starts on the
 * zone's hour (in Tehran, at :30 UTC), a day at local midnight, a week on
 * Saturday's. Where the clock changes inside a candle (daylight saving), the
 * candle runs from one local boundary to the next, so it may be an hour
 * shorter or longer than its nominal length.
 */
export class Buckets {
  constructor(readonly time: ZoneTime) {}

  /** Epoch ms of the start of the candle holding `ms`. */
  start(ms: number, interval: Interval): number {
    const size = CLOCK_SIZE[interval];
    if (size !== undefined) {
      const offset = this.offsetMs(ms);
      const sinceBoundary = mod(ms + offset, size);
      const candidate = ms - sinceBoundary;
      // The usual case: no clock change since the boundary, so local and real time ran alike.
      if (this.offsetMs(candidate) === offset) return candidate;
      return this.instantOfLocal(ms + offset - sinceBoundary);
    }
    const [year, month, day] = this.localDate(ms);
    if (interval === '1d') return this.startOfDate(year, month, day);
    // Weeks start on Saturday: back (weekday + 1) mod 7 days, weekday 0 being Sunday.
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
    return this.startOfDate(year, month, day - ((weekday + 1) % 7));
  }

  /** Epoch ms of the start of the candle after the one starting at `start`. */
  next(start: number, interval: Interval): number {
    const size = CLOCK_SIZE[interval];
    if (size !== undefined) {
      const following = this.start(start + size, interval);
      // A candle stretched by a clock change ends later than its nominal length.
      return following > start ? following : this.start(start + size + HOUR, interval);
    }
    const [year, month, day] = this.localDate(start);
    return this.startOfDate(year, month, day + (interval === '1d' ? 1 : 7));
  }

  /**
   * A function from a time to the start of its candle, for times that mostly
   * arrive in order: it works out a candle's bounds once and answers every
   * time inside them from those (rolling up a year of hours asks 8,760 times).
   */
  bucketer(interval: Interval): (ms: number) => number {
    let start = 0;
    let end = -Infinity;
    return (ms) => {
      if (ms < start || ms >= end) {
        start = this.start(ms, interval);
        end = this.next(start, interval);
      }
      return start;
    };
  }

  /** Step `count` candles back from the one starting at `start`. */
  back(start: number, interval: Interval, count: number): number {
    let at = start;
    for (let i = 0; i < count; i++) at = this.start(at - 1, interval);
    return at;
  }

  /** How many candles start in [from, to), both on candle boundaries; stops counting past `limit`. */
  count(from: number, to: number, interval: Interval, limit: number): number {
    const size = CLOCK_SIZE[interval];
    // Clock intervals: a clock change moves a boundary by an hour at most, so the ratio is exact to one candle.
    if (size !== undefined && size < HOUR * 4) return Math.round((to - from) / size);
    let count = 0;
    for (let at = from; at < to && count <= limit; at = this.next(at, interval)) count++;
    return count;
  }

  /** 00:00 of a calendar date in the zone (day may overflow the month); the first instant of the day where midnight does not exist. */
  startOfDate(year: number, month: number, day: number): number {
    const date = new Date(Date.UTC(year, month - 1, day));
    const y = date.getUTCFullYear();
    const m = date.getUTCMonth() + 1;
    const d = date.getUTCDate();
    const start = this.time.startOfDay(y, m, d);
    const wanted = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
    return this.time.day(start) === wanted ? start : this.time.nextMidnight(start);
  }

  /** The calendar date of `ms` in the zone. */
  localDate(ms: number): [number, number, number] {
    const day = this.time.day(ms);
    return [Number(day.slice(0, 4)), Number(day.slice(5, 7)), Number(day.slice(8, 10))];
  }

  private offsetMs(ms: number): number {
    return this.time.offsetMinutes(ms) * MINUTE;
  }

  /** The instant a local wall-clock time (as epoch ms read in UTC) names; in a repeated hour, the later reading. */
  private instantOfLocal(local: number): number {
    const guess = local - this.offsetMs(local);
    return local - this.offsetMs(guess);
  }
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}
