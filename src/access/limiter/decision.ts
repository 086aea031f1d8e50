import type { LimitDecision, LimitSpec } from './limiter.js';

/** A key's counts in its current windows, as a limiter knows them. */
export interface WindowCounts {
  /** Epoch ms the minute window ends. */
  minuteEnds: number;
  minuteCount: number;
  /** Epoch ms the day window ends (the zone's next midnight). */
  dayEnds: number;
  dayCount: number;
}

const MINUTE_MS = 60_000;

/**
 * Whether the day is the window a client must pace itself by, the one the
 * headers name (docs/api.md#headers). A spent window is named while it is
 * spent: it is what refuses (the day first, its wait being the longer).
 * Otherwise the day binds when the minute's limit would let the client spend
 * what is left of the day before midnight: what the current minute has left,
 * plus a full minute's limit for every minute after it.
 *
 * So the name does not flip from one answer to the next: admissions take one
 * from both windows, which leaves the comparison as it was, and each new
 * minute moves it only towards the minute (the minute's limit refills by
 * what was used, the minutes to come drop by one full limit). A day named
 * binds until a window is spent or the day's rest can no longer run out; then
 * the minute is named until midnight.
 */
export function dayBinds(spec: LimitSpec, minuteRemaining: number, dayRemaining: number, counts: WindowCounts): boolean {
  if (spec.perDay === null) return false;
  if (dayRemaining <= 0) return true;
  if (minuteRemaining <= 0) return false;
  const minutesAfter = Math.max(0, Math.floor((counts.dayEnds - counts.minuteEnds) / MINUTE_MS));
  return dayRemaining < minuteRemaining + spec.perMinute * minutesAfter;
}

/** Shared by every limiter: turn counts into the verdict and what the headers report. */
export function decide(allowed: boolean, spec: LimitSpec, counts: WindowCounts, now: number): LimitDecision {
  const minuteRemaining = Math.max(0, spec.perMinute - counts.minuteCount);
  const minuteReset = Math.max(1, Math.ceil((counts.minuteEnds - now) / 1000));
  const dayRemaining = spec.perDay === null ? Infinity : Math.max(0, spec.perDay - counts.dayCount);
  const dayReset = Math.max(1, Math.ceil((counts.dayEnds - now) / 1000));
  const retryAfter = dayRemaining <= 0 ? dayReset : minuteReset;
  return dayBinds(spec, minuteRemaining, dayRemaining, counts)
    ? { allowed, window: 'day', limit: spec.perDay!, remaining: dayRemaining, resetSeconds: dayReset, retryAfterSeconds: retryAfter }
    : { allowed, window: 'minute', limit: spec.perMinute, remaining: minuteRemaining, resetSeconds: minuteReset, retryAfterSeconds: retryAfter };
}
