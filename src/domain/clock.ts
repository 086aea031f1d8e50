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
