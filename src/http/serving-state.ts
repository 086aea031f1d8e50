import type { ApiError } from '../domain/errors.js';
import type { RefusedRequestLog } from './refused-log.js';
import type { CostAccount } from './shedding/cost-account.js';

/**
 * What the request paths read of the app around them, owned by the app and
 * filled in as it comes up and goes down. While closing or with the heap
 * nearly full every request goes to Fastify, which answers 503; while the
 * event loop is overloaded only the costliest callers are refused.
 */
export interface ServingState {
  closing: boolean;
  /** Heap use over its bound: every request is shed. Refreshed with each pressure sample: one boolean read per request. */
  underPressure: boolean;
  /** The event loop is overloaded: requests of the callers marked shed in `costs` are refused with `overloaded`. */
  shedding: boolean;
  /** Every caller's recent cost, charged as each request finishes (see load-shedding.ts). */
  costs: CostAccount;
  /** The answer of a shed request (503 with Retry-After). */
  overloaded: ApiError;
  /** The app's logger, which writes the one line per request. */
  log: RequestLogger | null;
  /** Whether the logger writes one line per request (level info or below): decided once, not per request. */
  logRequests: boolean;
  /** Refused requests folded per key, status and second, so a storm of them cannot flood the log. */
  refusals: RefusedRequestLog;
}

export interface RequestLogger {
  info(details: object, message: string): void;
}
