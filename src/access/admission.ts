import type { Service } from '../domain/plan.js';
import { ApiError } from '../domain/errors.js';
import { checkOrigin, checkService, identify } from './authenticate.js';
import type { AccessDirectory, KeyAccess } from './directory.js';
import type { FailedKeyThrottle } from './failed-attempts.js';
import type { LimitDecision, Limiter } from './limiter/limiter.js';

export interface Gatekeepers {
  directory: AccessDirectory;
  limiter: Limiter;
  failedAttempts: FailedKeyThrottle;
}

export interface Admitted {
  access: KeyAccess;
  decision: LimitDecision;
}

/**
 * Everything a keyed request passes before its route runs, in the documented
 * order: key (401, or 429 for an address that keeps failing) → account and
 * plan (403) → origin (403) → rate limit (429). The limiter counts the request
 * as soon as the key is known, whatever follows. Framework-free: the Fastify
 * hook and the raw detail path both call this.
 *
 * `onKnown` runs once the key is identified, before any later check can throw,
 * so callers can attach limit headers and metering to the failure too.
 */
export function admit(
  gate: Gatekeepers,
  service: Service,
  apiKey: string | string[] | undefined,
  origin: string | undefined,
  address: string,
  now: number,
  onKnown: (admitted: Admitted) => void,
): Admitted {
  let access: KeyAccess;
  try {
    access = identify(gate.directory, apiKey, now);
  } catch (error) {
    const wait = gate.failedAttempts.record(address, now);
    if (wait > 0) throw new ApiError('TOO_MANY_FAILED_ATTEMPTS', undefined, { 'retry-after': String(wait) });
    throw error;
  }
  const admitted = { access, decision: gate.limiter.consume(access.id, access.account.limits, now) };
  onKnown(admitted);
  checkService(access, service);
  checkOrigin(access, origin);
  const { decision } = admitted;
  if (!decision.allowed) {
    throw new ApiError('RATE_LIMIT_EXCEEDED', `The ${decision.window} limit of ${decision.limit} requests is spent; retry in ${decision.retryAfterSeconds} s.`);
  }
  return admitted;
}
