import { decide, type WindowCounts } from './decision.js';
import type { DayClock, LimitDecision, Limiter, LimitSpec, SharedLimiter } from './limiter.js';

/**
 * Fixed-window counters in a map: one lookup and two increments per request.
 * Windows are wall-clock aligned, so every instance and every restart agree
 * on when a window resets.
 */
export class MemoryLimiter implements Limiter, SharedLimiter {
  private readonly counters = new Map<string, WindowCounts>();
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
