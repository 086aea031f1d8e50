/** When a sampled signal (event-loop delay, utilisation) counts as overload: two thresholds and a hold time, so the verdict does not flap. */
export interface OverloadThresholds {
  /** The level above which the process starts shedding. */
  enter: number;
  /** The level below which it may stop. */
  leave: number;
  /** How long (ms) after the last sample above `enter` shedding lasts at least. */
  minHoldMs: number;
  /** Samples in a row above `enter` before shedding starts (default 3): one stalled moment is no overload. */
  enterSamples?: number;
}

/**
 * Hysteresis over a sampled signal: shedding starts after
 * `enterSamples` samples in a row above `enter` (a single stall, such as
 * start-up compiling every schema or a long collection, is no overload: the
 * sampler's timer fires once after it) and ends only with a sample below `leave` at least
 * `minHoldMs` after the last sample above `enter`. A level wavering between
 * the two thresholds changes nothing, so the verdict cannot switch every
 * sample the way a single threshold does when shedding itself relieves the load.
 */
export class OverloadSwitch {
  private on = false;
  private lastHigh = -Infinity;
  private highInARow = 0;

  constructor(private readonly thresholds: OverloadThresholds) {
    if (!(thresholds.leave <= thresholds.enter)) throw new Error('the leave threshold must not exceed the enter threshold');
  }

  get shedding(): boolean {
    return this.on;
  }

  /** Feed one sample; returns whether the verdict changed. */
  sample(level: number, now: number): boolean {
    const { enter, leave, minHoldMs } = this.thresholds;
    if (level > enter) {
      this.highInARow++;
      if (!this.on && this.highInARow < (this.thresholds.enterSamples ?? 3)) return false;
      this.lastHigh = now;
      if (this.on) return false;
      this.on = true;
      return true;
    }
    this.highInARow = 0;
    if (this.on && level < leave && now - this.lastHigh >= minHoldMs) {
      this.on = false;
      return true;
    }
    return false;
  }

  /** Whether the sample at `now` was above the enter threshold (still overloaded, not just holding). */
  overloadedAt(now: number): boolean {
    return this.lastHigh === now;
  }
}
