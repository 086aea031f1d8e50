import type { Service } from '../domain/plan.js';
import { ApiError } from '../domain/errors.js';
import { checkOrigin, checkService, identify } from './authenticate.js';
import type { AccessDirectory, KeyAccess } from './directory.js';
import type { FailedKeyThrottle } from './failed-attempts.js';
import { appendRateLimitHeaders, type LimitDecision, type SharedLimiter } from './limiter/limiter.js';

export interface Gatekeepers {
  directory: AccessDirectory;
  limiter: SharedLimiter;
  failedAttempts: FailedKeyThrottle;
}

/**
 * What admission learned, kept by the caller: it stays filled in when a later
 * check throws, so a refused request still carries its limit headers and is
 * metered against its key.
 */
export interface AdmissionRecord {
  /** The identified key, once known. */
  access: KeyAccess | null;
  /** A flat [name, value, …] list; the rate-limit headers are appended to it. */
  headers: string[];
}

/**
 * Everything a keyed request passes before its route runs, in the documented
 * order: key (401, or 429 for an address that keeps failing) → account and
 * plan (403) → origin (403) → rate limit (429). The limiter counts the request
 * as soon as the key is known, whatever follows. Framework-free: the Fastify
 * hook and the detail answer both call this.
 *
 * Once the key is identified it is written to `record`, with the limit
 * headers, before any later check can throw (or the promise rejects).
 *
 * Returns the key at once in the common case. Only when the shared limiter
 * must ask Redis first (a burst on a key this node holds no quota for, see
 * access/limiter/redis.ts) is the answer a promise; callers test for it with
 * `instanceof Promise`, so the immediate path allocates neither a promise nor
 * a closure.
 */
export function admit(
  gate: Gatekeepers,
  service: Service,
  apiKey: string | string[] | undefined,
  origin: string | undefined,
  address: string,
  now: number,
  record: AdmissionRecord,
): KeyAccess | Promise<KeyAccess> {
  let access: KeyAccess;
  try {
    access = identify(gate.directory, apiKey, now);
  } catch (error) {
    const wait = gate.failedAttempts.record(address, now);
    if (wait > 0) throw new ApiError('TOO_MANY_FAILED_ATTEMPTS', undefined, { 'retry-after': String(wait) });
    throw error;
  }
  const decision = gate.limiter.consume(access.id, access.account.limits, now);
  record.access = access;
  if (decision instanceof Promise) return admitLater(decision, access, service, origin, record);
  return conclude(decision, access, service, origin, record);
}

/** The rare path, kept apart so that `admit` itself creates no closure. */
function admitLater(pending: Promise<LimitDecision>, access: KeyAccess, service: Service, origin: string | undefined, record: AdmissionRecord): Promise<KeyAccess> {
  return pending.then((decision) => conclude(decision, access, service, origin, record));
}

function conclude(decision: LimitDecision, access: KeyAccess, service: Service, origin: string | undefined, record: AdmissionRecord): KeyAccess {
  appendRateLimitHeaders(record.headers, decision, access.account.limits);
  checkService(access, service);
  checkOrigin(access, origin);
  if (!decision.allowed) {
    throw new ApiError('RATE_LIMIT_EXCEEDED', `The ${decision.window} limit of ${decision.limit} requests is spent; retry in ${decision.retryAfterSeconds} s.`);
  }
  return access;
}
