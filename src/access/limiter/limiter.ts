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

/**
 * A limiter shared by several nodes (the Redis one). It answers at once for a
 * key it holds quota or credit for — the steady state of every busy key — and
 * only otherwise after one Redis round trip, so callers must accept either.
 * `MemoryLimiter` satisfies this too (it always answers at once).
 */
export interface SharedLimiter {
  consume(keyId: string, spec: LimitSpec, now: number): LimitDecision | Promise<LimitDecision>;
  /** False while the shared counters are out of reach and each node limits to its share. */
  readonly healthy: boolean;
}

/** Window boundaries: the minute is plain arithmetic, the day follows the zone's midnight. */
export interface DayClock {
  /** Epoch ms of the next midnight in the zone after `now`. */
  nextMidnight(now: number): number;
}

const policies = new WeakMap<LimitSpec, string>();

/** `RateLimit-Policy` for a spec; limits objects are shared per plan, so this is built once each. */
function policyOf(spec: LimitSpec): string {
  let policy = policies.get(spec);
  if (policy === undefined) {
    policy = spec.perDay === null ? `"minute";q=${spec.perMinute};w=60` : `"minute";q=${spec.perMinute};w=60, "day";q=${spec.perDay};w=86400`;
    policies.set(spec, policy);
  }
  return policy;
}

/**
 * The rate-limit headers of a response (IETF `RateLimit`/`RateLimit-Policy` plus the common
 * `X-RateLimit-*`), appended to a flat `[name, value, name, value…]` list.
 */
export function appendRateLimitHeaders(headers: string[], decision: LimitDecision, spec: LimitSpec): void {
  const remaining = String(decision.remaining);
  const reset = String(decision.resetSeconds);
  headers.push(
    'ratelimit-policy',
    policyOf(spec),
    'ratelimit',
    `"${decision.window}";r=${remaining};t=${reset}`,
    'x-ratelimit-limit',
    String(decision.limit),
    'x-ratelimit-remaining',
    remaining,
    'x-ratelimit-reset',
    reset,
  );
  if (!decision.allowed) headers.push('retry-after', String(decision.retryAfterSeconds));
}
