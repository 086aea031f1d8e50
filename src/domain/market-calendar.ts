import { ZoneTime } from './time.js';

/** Why a market is closed, in English and in Persian (the Persian in ordinary letters, NFKC). */
export interface ClosureReason {
  readonly en: string;
  readonly fa: string;
}

/** A weekday (0 Sunday … 6 Saturday) and a minute of that day, in the market's zone. */
export interface WeekTime {
  readonly day: number;
  readonly minute: number;
}

/** A closure that comes back every week: from one weekday and time to another (the next one, a week later at most). */
export interface WeeklyClosure {
  readonly from: WeekTime;
  readonly to: WeekTime;
  readonly reason: ClosureReason;
}

/** A Gregorian month and day the market is closed every year (25 December). */
export interface AnnualClosure {
  readonly month: number;
  readonly day: number;
  readonly reason: ClosureReason;
}

/** What an operator declared for one day of a market (`nerkh calendar close|open`). */
export interface DayOverride {
  readonly action: 'close' | 'open';
  /** The operator's text for a closure; null for an opening. */
  readonly reason: string | null;
}

/** A market's rules: its zone, weekly and annual closures, and its official holidays. */
export interface MarketRules {
  readonly name: string;
  readonly timeZone: string;
  readonly weekly: readonly WeeklyClosure[];
  readonly annual: readonly AnnualClosure[];
  /** The official holidays of a Gregorian year, by local date (YYYY-MM-DD); empty for a market that keeps none. */
  readonly holidays: (year: number) => ReadonlyMap<string, ClosureReason>;
}

/** A market as it stands at one instant. */
export interface MarketState {
  readonly name: string;
  readonly state: 'open' | 'closed';
  /** Why it is closed; null while open. */
  readonly reason: ClosureReason | null;
  /** When it opens again (epoch ms); null while open. */
  readonly opensAt: number | null;
  /** The next instant the state or reason can change (epoch ms): nothing about the market needs computing again before it. */
  readonly until: number;
}

/** One closed day as the calendar lists it. */
export interface ClosedDay {
  /** Gregorian YYYY-MM-DD in the market's zone. */
  readonly date: string;
  /** Jalali YYYY/MM/DD in the market's zone. */
  readonly dateJalali: string;
  readonly reason: ClosureReason;
}

interface Segment {
  readonly start: number;
  readonly end: number;
  readonly reason: ClosureReason;
}

interface YearSegments {
  readonly segments: readonly Segment[];
  /** Closed milliseconds before each segment, within the year (prefix sums). */
  readonly before: readonly number[];
}

const DAY_MS = 86_400_000;
/** Years of closures kept per calendar; the window a service asks about is a few years wide. */
const MAX_CACHED_YEARS = 16;
/** How far `addOpen` and `opensAt` look ahead before giving up (a market closed for longer is treated as never opening again). */
const MAX_YEARS_AHEAD = 5;

/** Priority of a closure's reason when several cover the same instant: the operator's, then a holiday, then the weekly rule. */
const WEEKLY = 1;
const HOLIDAY = 2;
const OPERATOR = 3;

export const OPERATOR_REASON_DEFAULT: ClosureReason = Object.freeze({ en: 'Closed by the operator', fa: 'تعطیل به اعلام گرداننده' });

/** Reasons are served in ordinary letters: holiday data written in Arabic presentation forms is folded by NFKC. */
export function normaliseReason(text: string): string {
  return text.normalize('NFKC').replace(/\s+/g, ' ').trim();
}

/** A Gregorian date as YYYY-MM-DD. */
export function isoDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function dateParts(utcMidnight: number): [number, number, number] {
  const date = new Date(utcMidnight);
  return [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
}

/**
 * One market's calendar: when it is closed and why, and how much of a span of
 * time it was open. Immutable: an operator's change makes a new calendar.
 * Closures are worked out a Gregorian year at a time (in UTC instants) as
 * sorted, non-overlapping segments with prefix sums, so a state, an open-time
 * age or an expiry is a binary search, not a walk over days.
 */
export class MarketCalendar {
  readonly name: string;
  readonly zone: ZoneTime;
  private readonly years = new Map<number, YearSegments>();

  constructor(
    readonly rules: MarketRules,
    /** Operator overrides by local date (YYYY-MM-DD). */
    private readonly overrides: ReadonlyMap<string, DayOverride> = new Map(),
  ) {
    this.name = rules.name;
    this.zone = new ZoneTime(rules.timeZone);
  }

  /** The market at `ms`: open or closed, why, when it opens, and until when that holds. */
  stateAt(ms: number): MarketState {
    const year = yearOf(ms);
    const { segments } = this.yearSegments(year);
    const index = lastStartingAtOrBefore(segments, ms);
    const segment = index >= 0 ? segments[index]! : undefined;
    if (segment && ms < segment.end) {
      const opensAt = this.runEnd(segment.end);
      return { name: this.name, state: 'closed', reason: segment.reason, opensAt, until: segment.end };
    }
    const next = segments[index + 1];
    return { name: this.name, state: 'open', reason: null, opensAt: null, until: next ? next.start : Date.UTC(year + 1, 0, 1) };
  }

  /** Milliseconds the market was open between `from` and `to` (0 when `to` is not after `from`). */
  openMs(from: number, to: number): number {
    if (!(to > from)) return 0;
    return to - from - this.closedMs(from, to);
  }

  /**
   * The instant `ms` of open time after `from` has passed: where a value
   * updated at `from` reaches an open-time age of `ms`. Infinity for an
   * infinite `ms` or a market that stays closed past the look-ahead.
   */
  addOpen(from: number, ms: number): number {
    if (!Number.isFinite(ms)) return Infinity;
    let at = from;
    let left = ms;
    const lastYear = yearOf(from) + MAX_YEARS_AHEAD;
    for (let year = yearOf(from); year <= lastYear; year++) {
      const { segments } = this.yearSegments(year);
      const yearEnd = Date.UTC(year + 1, 0, 1);
      let index = lastStartingAtOrBefore(segments, at);
      if (index < 0 || segments[index]!.end <= at) index++;
      for (; index < segments.length; index++) {
        const segment = segments[index]!;
        if (segment.start > at) {
          if (segment.start - at >= left) return at + left;
          left -= segment.start - at;
        }
        at = Math.max(at, segment.end);
      }
      if (yearEnd - at >= left) return at + left;
      left -= yearEnd - at;
      at = yearEnd;
    }
    return Infinity;
  }

  /**
   * The closed days from `first` to `last` (YYYY-MM-DD, inclusive) in the
   * market's zone: a day is closed when the market is closed for at least half
   * of it, and its reason is the one that covers the most of it.
   */
  closedDays(first: string, last: string): ClosedDay[] {
    const days: ClosedDay[] = [];
    let [y, m, d] = first.split('-').map(Number) as [number, number, number];
    const end = last;
    for (let guard = 0; guard < 5000; guard++) {
      const date = isoDate(y, m, d);
      if (date > end) break;
      const start = this.zone.localToEpoch(y, m, d);
      const next = dateParts(Date.UTC(y, m - 1, d) + DAY_MS);
      const stop = this.zone.localToEpoch(next[0], next[1], next[2]);
      const reason = this.mainReason(start, stop);
      if (reason) days.push({ date, dateJalali: this.zone.jalaliDate(start + (stop - start) / 2), reason });
      [y, m, d] = next;
    }
    return days;
  }

  /** The reason covering most of [start, stop) when the market is closed for at least half of it; else null. */
  private mainReason(start: number, stop: number): ClosureReason | null {
    const closed = this.closedMs(start, stop);
    if (closed * 2 < stop - start) return null;
    const byReason = new Map<ClosureReason, number>();
    for (let year = yearOf(start); year <= yearOf(stop - 1); year++) {
      for (const segment of this.yearSegments(year).segments) {
        const overlap = Math.min(stop, segment.end) - Math.max(start, segment.start);
        if (overlap > 0) byReason.set(segment.reason, (byReason.get(segment.reason) ?? 0) + overlap);
      }
    }
    let best: ClosureReason | null = null;
    let most = 0;
    for (const [reason, ms] of byReason) if (ms > most) [best, most] = [reason, ms];
    return best;
  }

  private closedMs(from: number, to: number): number {
    let closed = 0;
    for (let year = yearOf(from); year <= yearOf(to - 1); year++) {
      const yearStart = Date.UTC(year, 0, 1);
      const yearEnd = Date.UTC(year + 1, 0, 1);
      closed += this.closedBefore(year, Math.min(to, yearEnd)) - this.closedBefore(year, Math.max(from, yearStart));
    }
    return closed;
  }

  /** Closed milliseconds of `year` before `ms` (an instant within the year or at its end). */
  private closedBefore(year: number, ms: number): number {
    const { segments, before } = this.yearSegments(year);
    const index = lastStartingAtOrBefore(segments, ms);
    if (index < 0) return 0;
    const segment = segments[index]!;
    return before[index]! + Math.min(ms, segment.end) - segment.start;
  }

  /** Where the run of closures that reaches `end` ends: closures that touch continue it (a Friday before Nowruz). */
  private runEnd(end: number): number {
    let at = end;
    for (let guard = 0; guard < 10_000; guard++) {
      const year = yearOf(at);
      if (year > yearOf(end) + MAX_YEARS_AHEAD) return Infinity;
      const { segments } = this.yearSegments(year);
      const index = lastStartingAtOrBefore(segments, at);
      const segment = index >= 0 ? segments[index] : undefined;
      if (!segment || segment.end <= at) return at;
      at = segment.end;
    }
    return at;
  }

  private yearSegments(year: number): YearSegments {
    let cached = this.years.get(year);
    if (!cached) {
      cached = this.build(year);
      if (this.years.size >= MAX_CACHED_YEARS) this.years.clear();
      this.years.set(year, cached);
    }
    return cached;
  }

  /** The closures of a Gregorian year (UTC instants), from the local days around it. */
  private build(year: number): YearSegments {
    const yearStart = Date.UTC(year, 0, 1);
    const yearEnd = Date.UTC(year + 1, 0, 1);
    const closures: { start: number; end: number; priority: number; reason: ClosureReason }[] = [];
    const openings: { start: number; end: number }[] = [];
    const holidays = new Map<number, ReadonlyMap<string, ClosureReason>>();
    const holidaysOf = (y: number) => {
      let map = holidays.get(y);
      if (!map) holidays.set(y, (map = this.rules.holidays(y)));
      return map;
    };
    // Local days from a week before the year to a week after it: a weekly closure may start days before it reaches the year.
    for (let day = yearStart - 8 * DAY_MS; day < yearEnd + 8 * DAY_MS; day += DAY_MS) {
      const [y, m, d] = dateParts(day);
      const date = isoDate(y, m, d);
      const start = this.zone.localToEpoch(y, m, d);
      const next = dateParts(day + DAY_MS);
      const stop = this.zone.localToEpoch(next[0], next[1], next[2]);
      const weekday = new Date(day).getUTCDay();
      for (const rule of this.rules.weekly) {
        if (rule.from.day !== weekday) continue;
        let span = (rule.to.day - rule.from.day + 7) % 7;
        if (span === 0 && rule.to.minute <= rule.from.minute) span = 7;
        const until = dateParts(day + span * DAY_MS);
        const from = this.zone.localToEpoch(y, m, d, 0, rule.from.minute);
        const to = this.zone.localToEpoch(until[0], until[1], until[2], 0, rule.to.minute);
        if (to > from) closures.push({ start: from, end: to, priority: WEEKLY, reason: rule.reason });
      }
      for (const rule of this.rules.annual) if (rule.month === m && rule.day === d) closures.push({ start, end: stop, priority: HOLIDAY, reason: rule.reason });
      const holiday = holidaysOf(y).get(date);
      if (holiday) closures.push({ start, end: stop, priority: HOLIDAY, reason: holiday });
      const override = this.overrides.get(date);
      if (override?.action === 'close') {
        const reason = override.reason === null ? OPERATOR_REASON_DEFAULT : { en: override.reason, fa: override.reason };
        closures.push({ start, end: stop, priority: OPERATOR, reason });
      } else if (override?.action === 'open') openings.push({ start, end: stop });
    }
    // Cut the timeline at every edge; each piece takes the reason of the highest-priority closure covering it.
    const edges = new Set<number>([yearStart, yearEnd]);
    for (const c of closures) edges.add(c.start).add(c.end);
    for (const o of openings) edges.add(o.start).add(o.end);
    const sorted = [...edges].filter((t) => t >= yearStart && t <= yearEnd).sort((a, b) => a - b);
    const segments: Segment[] = [];
    for (let i = 0; i + 1 < sorted.length; i++) {
      const start = sorted[i]!;
      const end = sorted[i + 1]!;
      if (openings.some((o) => o.start <= start && end <= o.end)) continue;
      let top: (typeof closures)[number] | undefined;
      for (const c of closures) if (c.start <= start && end <= c.end && (!top || c.priority > top.priority)) top = c;
      if (!top) continue;
      const last = segments[segments.length - 1];
      if (last && last.end === start && last.reason === top.reason) segments[segments.length - 1] = { start: last.start, end, reason: last.reason };
      else segments.push({ start, end, reason: top.reason });
    }
    const before: number[] = [];
    let total = 0;
    for (const segment of segments) {
      before.push(total);
      total += segment.end - segment.start;
    }
    return { segments, before };
  }
}

function yearOf(ms: number): number {
  return new Date(ms).getUTCFullYear();
}

/** The index of the last segment starting at or before `ms`; -1 when none does. */
function lastStartingAtOrBefore(segments: readonly Segment[], ms: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (segments[mid]!.start <= ms) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
