/** The numbers a key is limited by; null per day means unlimited. */
export interface LimitSpec {
  perMinute: number;
  perDay: number | null;
}

/** One request's verdict and what the rate-limit headers report. */
export interface LimitDecision {
  allowed: boolean;
  /** The window closest to exhaustion: what `RateLimit` and `X-RateLimit-*` report. */
  window: 'minute' | 'day';
  limit: number;
  remaining: number;
  /** Seconds until that window resets. */
  resetSeconds: number;
  /** Seconds until a request would be allowed again (only when refused). */
  retryAfterSeconds: number;
}

/**
 * Counts requests per key in fixed wall-clock windows (the minute, and the
 * day in the configured zone). In process now; a shared implementation
 * (Redis) keeps the same contract across instances.
 */
export interface Limiter {
  consume(keyId: string, spec: LimitSpec, now: number): LimitDecision;
}

/** Window boundaries: the minute is plain arithmetic, the day follows the zone's midnight. */
export interface DayClock {
  /** Epoch ms of the next midnight in the zone after `now`. */
  nextMidnight(now: number): number;
}

export function rateLimitHeaders(decision: LimitDecision, spec: LimitSpec): Record<string, string> {
  const policy = spec.perDay === null ? `"minute";q=${spec.perMinute};w=60` : `"minute";q=${spec.perMinute};w=60, "day";q=${spec.perDay};w=86400`;
  const headers: Record<string, string> = {
    'ratelimit-policy': policy,
    ratelimit: `"${decision.window}";r=${decision.remaining};t=${decision.resetSeconds}`,
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetSeconds),
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}
