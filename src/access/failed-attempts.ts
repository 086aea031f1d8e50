/** Counts failed-key (401) answers per client address; past the limit, failing requests get 429. */
export interface FailedKeyThrottle {
  /** Count one failure; returns the seconds to wait when the address is over its limit, else 0. */
  record(address: string, now: number): number;
}

/**
 * Throttles guessing: 401s are counted per client address in a fixed minute
 * window, and past the threshold further *failing* requests from that address
 * get 429 instead. Requests with a valid key never consult this, so a shop's
 * good key keeps working behind the same NAT as a misconfigured board.
 */
export class FailedAttempts implements FailedKeyThrottle {
  private readonly windows = new Map<string, { endsAt: number; count: number }>();
  private nextSweep = 0;

  constructor(private readonly perMinute = 30) {}

  /** Count one failure; returns the seconds to wait when the address is over its limit, else 0. */
  record(address: string, now: number): number {
    if (now >= this.nextSweep) this.sweep(now);
    let window = this.windows.get(address);
    if (!window || now >= window.endsAt) {
      window = { endsAt: now - (now % 60_000) + 60_000, count: 0 };
      this.windows.set(address, window);
    }
    window.count++;
    return window.count > this.perMinute ? Math.max(1, Math.ceil((window.endsAt - now) / 1000)) : 0;
  }

  private sweep(now: number): void {
    this.nextSweep = now + 60_000;
    for (const [address, window] of this.windows) if (window.endsAt <= now) this.windows.delete(address);
  }
}
