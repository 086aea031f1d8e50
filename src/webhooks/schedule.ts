/**
 * The delivery schedule: the first attempt at once, then after about 5 s,
 * 30 s, 2 min, 10 min and 1 h, then hourly, for 24 h from the event; an
 * endpoint failing for 3 days is disabled; `stale` after 5 minutes. Every
 * duration is multiplied by `scale` (1, except in tests: NERKH_WEBHOOK_TIME_SCALE).
 */
export interface WebhookTimings {
  /** The wait before attempt n + 1 after n failed attempts (n ≥ 1). */
  retryDelayMs(failedAttempts: number): number;
  /** How long after the event a delivery is still tried. */
  readonly retryWindowMs: number;
  /** An endpoint whose attempts all failed for this long is disabled. */
  readonly disableAfterMs: number;
  /** A reference stale this long is reported `stale`. */
  readonly staleAfterMs: number;
  /** One attempt's whole exchange at most (not scaled: a real receiver's time). */
  readonly timeoutMs: number;
}

const STEPS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];
const HOUR_MS = 3_600_000;

export function webhookTimings(scale = 1): WebhookTimings {
  return {
    retryDelayMs: (failed) => Math.max(1, Math.round((STEPS_MS[failed - 1] ?? HOUR_MS) * scale)),
    retryWindowMs: 24 * HOUR_MS * scale,
    disableAfterMs: 72 * HOUR_MS * scale,
    staleAfterMs: 300_000 * scale,
    timeoutMs: 10_000,
  };
}

/** After `failed` attempts of a delivery made at `createdAt`, when to try again; null: its 24 h are over, give up. */
export function nextAttemptAt(timings: WebhookTimings, createdAt: number, failed: number, now: number): number | null {
  const next = now + timings.retryDelayMs(failed);
  return next > createdAt + timings.retryWindowMs ? null : next;
}
