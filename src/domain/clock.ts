/**
 * Where the service reads the time. Everything that decides by the clock
 * (refresh tiers, limit windows, staleness, usage days) asks one of these,
 * passed in, so tests can set the time instead of waiting for it.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Real time moved by a fixed amount (`NERKH_CLOCK_SHIFT_MS`): a test puts a
 * spawned server a few seconds into a minute, or a rehearsal on a Friday,
 * while its timers still see time pass.
 */
export class ShiftedClock implements Clock {
  constructor(readonly shiftMs: number) {}

  now(): number {
    return Date.now() + this.shiftMs;
  }
}

/** A clock that moves only when told to: for tests and replays. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}

  now(): number {
    return this.ms;
  }

  set(ms: number): void {
    this.ms = ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}
