import { systemClock, type Clock } from './clock.js';

const OFFSET_BUCKET_MS = 15 * 60 * 1000;
const MAX_CACHED_BUCKETS = 4096;
const DAY_MS = 86_400_000;

/**
 * The service's clock, and its timestamps in the configured zone, always with
 * a numeric offset (never `Z`): `2026-11-21T14:03:07+03:30`. Offsets are
 * looked up through Intl once per quarter hour of UTC time and cached, so
 * formatting on the request path is string slicing only.
 */
export class ZoneTime {
  readonly timeZone: string;
  private readonly offsetFormat: Intl.DateTimeFormat;
  private readonly jalaliFormat: Intl.DateTimeFormat;
  private readonly offsets = new Map<number, number>();
  private readonly jalaliDays = new Map<string, string>();
  private lastSecond = -1;
  private lastText = '';
  private dayOfText = '';
  private lastDay = '';
  private jalaliSecond = -1;
  private jalaliText = '';

  constructor(
    timeZone: string,
    readonly clock: Clock = systemClock,
  ) {
    if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone: ${timeZone}`);
    this.timeZone = timeZone;
    this.offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    this.jalaliFormat = new Intl.DateTimeFormat('en-u-ca-persian-nu-latn', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
  }

  /** Epoch ms now, from the injected clock. */
  now(): number {
    return this.clock.now();
  }

  /** Offset of the zone from UTC at `ms`, in minutes (Tehran: 210). */
  offsetMinutes(ms: number): number {
    const bucket = Math.floor(ms / OFFSET_BUCKET_MS);
    let offset = this.offsets.get(bucket);
    if (offset === undefined) {
      offset = parseGmtOffset(this.offsetFormat.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT');
      if (this.offsets.size >= MAX_CACHED_BUCKETS) this.offsets.clear();
      this.offsets.set(bucket, offset);
    }
    return offset;
  }

  /** ISO 8601 with a numeric offset, to the second. */
  format(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second === this.lastSecond) return this.lastText;
    const offset = this.offsetMinutes(ms);
    const local = new Date(second * 1000 + offset * 60_000).toISOString().slice(0, 19);
    const text = local + formatOffset(offset);
    this.lastSecond = second;
    this.lastText = text;
    return text;
  }

  /** The calendar date (YYYY-MM-DD) in the zone: the day usage is counted under. */
  day(ms: number): string {
    const text = this.format(ms);
    // format() returns the same string all second long, so the slice is taken once a second.
    if (text !== this.dayOfText) {
      this.dayOfText = text;
      this.lastDay = text.slice(0, 10);
    }
    return this.lastDay;
  }

  /** Epoch ms of the first midnight in the zone after `ms`: when a usage or limit day ends. */
  nextMidnight(ms: number): number {
    const today = this.day(ms);
    const local = ms + this.offsetMinutes(ms) * 60_000;
    const nextLocalMidnight = local - (((local % DAY_MS) + DAY_MS) % DAY_MS) + DAY_MS;
    // Where the offset changes at midnight, local midnight may not exist (the day starts
    // at 01:00): try the offset on either side and take the earliest instant of the next day.
    const first = nextLocalMidnight - this.offsetMinutes(ms) * 60_000;
    const second = nextLocalMidnight - this.offsetMinutes(first) * 60_000;
    const candidates = [first, second].sort((a, b) => a - b);
    return candidates.find((t) => this.day(t) !== today) ?? candidates[1]!;
  }

  /** Epoch ms of 00:00 of a calendar date in the zone (for date-only input such as key expiry). */
  startOfDay(year: number, month: number, day: number): number {
    return this.localToEpoch(year, month, day);
  }

  /**
   * Epoch ms of a wall-clock time in the zone (a document's naive local time).
   * The offset is looked up at a first guess and again at the instant it
   * gives, so a time just after a change of offset lands right; a time that
   * does not exist (skipped by a spring-forward) reads as the instant after.
   */
  localToEpoch(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
    const wall = Date.UTC(year, month - 1, day, hour, minute, second, ms);
    const guess = wall - this.offsetMinutes(wall) * 60_000;
    return wall - this.offsetMinutes(guess) * 60_000;
  }

  /** Solar Hijri (Jalali) date in the zone, `1405/08/30`; cached per calendar day. */
  jalaliDate(ms: number): string {
    const day = this.day(ms);
    const cached = this.jalaliDays.get(day);
    if (cached) return cached;
    const parts = this.jalaliFormat.formatToParts(ms);
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
    const text = `${get('year')}/${get('month')}/${get('day')}`;
    if (this.jalaliDays.size >= MAX_CACHED_BUCKETS) this.jalaliDays.clear();
    this.jalaliDays.set(day, text);
    return text;
  }

  /** Jalali date and local time in the zone, `1405/09/01 22:33:17`; the last second is cached. */
  jalaliDateTime(ms: number): string {
    const second = Math.floor(ms / 1000);
    if (second !== this.jalaliSecond) {
      this.jalaliText = `${this.jalaliDate(ms)} ${this.format(ms).slice(11, 19)}`;
      this.jalaliSecond = second;
    }
    return this.jalaliText;
  }
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

function parseGmtOffset(text: string): number {
  const match = /^GMT([+-])(\d{2}):?(\d{2})?$/.exec(text);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === '-' ? -minutes : minutes;
}

function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${sign}${hh}:${mm}`;
}

/** Human age, "5 seconds ago" style, for the status page. */
export function formatAge(seconds: number): string {
  if (seconds < 0) return 'just now';
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'} ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  const days = Math.floor(hours / 24);
  return `${days} days ago`;
}

/** True when year-month-day is a date of the calendar (no 30 February). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
}

const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * An ISO 8601 date-time, strictly: a real calendar date, hours 0-23, minutes and
 * seconds 0-59. With `requireZone` a trailing `Z` or offset is mandatory.
 * Returns epoch ms, or null.
 */
export function parseIsoDateTime(text: unknown, requireZone: boolean): { ms: number; hasZone: boolean } | null {
  if (typeof text !== 'string') return null;
  const match = ISO_TIMESTAMP.exec(text);
  if (!match) return null;
  const [, y, mo, d, h, mi, sec, , zone] = match;
  if (!isCalendarDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59 || Number(sec ?? 0) > 59) return null;
  if (requireZone && !zone) return null;
  if (zone && zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(-2)) > 59)) return null;
  const ms = Date.parse(zone ? text : `${text}Z`);
  return Number.isFinite(ms) ? { ms, hasZone: zone !== undefined } : null;
}
