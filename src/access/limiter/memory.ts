import type { DayClock, LimitDecision, Limiter, LimitSpec, SharedLimiter } from './limiter.js';

interface Counter {
  minuteEnds: number;
  minuteCount: number;
  dayEnds: number;
  dayCount: number;
}

/**
 * Fixed-window counters in a map: one lookup and two increments per request.
 * Windows are wall-clock aligned, so every instance and every restart agree
 * on when a window resets.
 */
export class MemoryLimiter implements Limiter, SharedLimiter {
  private readonly counters = new Map<string, Counter>();
  private nextSweep = 0;
  /** Nothing to lose touch with: one process counts every request. */
  readonly healthy = true;

  constructor(private readonly days: DayClock) {}

  consume(keyId: string, spec: LimitSpec, now: number): LimitDecision {
    let counter = this.counters.get(keyId);
    if (!counter) {
      counter = { minuteEnds: 0, minuteCount: 0, dayEnds: 0, dayCount: 0 };
      this.counters.set(keyId, counter);
    }
    if (now >= counter.minuteEnds) {
      counter.minuteEnds = now - (now % 60_000) + 60_000;
      counter.minuteCount = 0;
    }
    if (now >= counter.dayEnds) {
      counter.dayEnds = this.days.nextMidnight(now);
      counter.dayCount = 0;
    }
    const minuteLeft = spec.perMinute - counter.minuteCount;
    const dayLeft = spec.perDay === null ? Infinity : spec.perDay - counter.dayCount;
    const allowed = minuteLeft > 0 && dayLeft > 0;
    if (allowed) {
      counter.minuteCount++;
      counter.dayCount++;
    }
    if (now >= this.nextSweep) this.sweep(now);
    return decide(allowed, spec, counter, now);
  }

  /** Forget keys idle past both windows, so memory follows active keys only. */
  private sweep(now: number): void {
    this.nextSweep = now + 60_000;
    for (const [key, counter] of this.counters) if (counter.dayEnds <= now && counter.minuteEnds <= now) this.counters.delete(key);
  }
}

/** Shared by every implementation: turn counts into the verdict and header numbers. */
export function decide(allowed: boolean, spec: LimitSpec, counter: Counter, now: number): LimitDecision {
  const minuteRemaining = Math.max(0, spec.perMinute - counter.minuteCount);
  const minuteReset = Math.max(1, Math.ceil((counter.minuteEnds - now) / 1000));
  const dayRemaining = spec.perDay === null ? Infinity : Math.max(0, spec.perDay - counter.dayCount);
  const dayReset = Math.max(1, Math.ceil((counter.dayEnds - now) / 1000));
  // Report the window closer to exhaustion (by share left); the minute wins ties.
  const dayBinds = spec.perDay !== null && dayRemaining / spec.perDay < minuteRemaining / spec.perMinute;
  const retryAfter = dayRemaining <= 0 ? dayReset : minuteReset;
  return dayBinds
    ? { allowed, window: 'day', limit: spec.perDay!, remaining: dayRemaining, resetSeconds: dayReset, retryAfterSeconds: retryAfter }
    : { allowed, window: 'minute', limit: spec.perMinute, remaining: minuteRemaining, resetSeconds: minuteReset, retryAfterSeconds: retryAfter };
}
