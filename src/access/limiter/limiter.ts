/** The numbers a key is limited by; null per day means unlimited. */
export interface LimitSpec {
  perMinute: number;
  perDay: number | null;
}

/** One request's verdict and what the rate-limit headers report. */
export interface LimitDecision {
  allowed: boolean;
  /** The window a client must pace itself by (decision.ts): what `RateLimit` and `X-RateLimit-*` report. */
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

/** A plan's header values that never change: built once per limits object (limits are shared per plan). */
interface PlanHeaders {
  /** `RateLimit-Policy`: every window of the plan. */
  policy: string;
  minuteLimit: string;
  dayLimit: string;
}

const planHeaders = new WeakMap<LimitSpec, PlanHeaders>();

function planHeadersOf(spec: LimitSpec): PlanHeaders {
  let headers = planHeaders.get(spec);
  if (headers === undefined) {
    const minute = `"minute";q=${spec.perMinute};w=60`;
    headers = {
      policy: spec.perDay === null ? minute : `${minute}, "day";q=${spec.perDay};w=86400`,
      minuteLimit: String(spec.perMinute),
      dayLimit: String(spec.perDay),
    };
    planHeaders.set(spec, headers);
  }
  return headers;
}

/**
 * The rate-limit headers of a response (IETF `RateLimit`/`RateLimit-Policy` plus the common
 * `X-RateLimit-*`), appended to a flat `[name, value, name, value…]` list. `RateLimit` and
 * `X-RateLimit-*` report one window, the one the decision names (see decision.ts): the one a
 * client must pace itself by, named alike on consecutive answers until the other one binds.
 */
export function appendRateLimitHeaders(headers: string[], decision: LimitDecision, spec: LimitSpec): void {
  const plan = planHeadersOf(spec);
  const remaining = String(decision.remaining);
  const reset = String(decision.resetSeconds);
  const day = decision.window === 'day';
  headers.push(
    'ratelimit-policy',
    plan.policy,
    'ratelimit',
    (day ? '"day";r=' : '"minute";r=') + remaining + ';t=' + reset,
    'x-ratelimit-limit',
    day ? plan.dayLimit : plan.minuteLimit,
    'x-ratelimit-remaining',
    remaining,
    'x-ratelimit-reset',
    reset,
  );
  if (!decision.allowed) headers.push('retry-after', String(decision.retryAfterSeconds));
}
