import type { KeyAccess } from '../../access/directory.js';
import type { Service } from '../../domain/plan.js';
import { redactKeysInUrl } from '../../domain/redact.js';
import type { AppDeps } from '../deps.js';
import type { ServingState } from '../serving-state.js';
import type { KeyedFailure } from './exchange.js';

export type FinishDeps = Pick<AppDeps, 'meter' | 'metrics'>;

/** What metering reads of a keyed request (an Exchange is one). */
export interface Metered {
  access: KeyAccess | null;
  failure: KeyedFailure | null;
  now: number;
  /** The body written, whose bytes count towards the caller's cost. */
  body: Buffer | null;
}

/**
 * Writing a body costs the process past the handler's own time (copying into
 * the socket, the writes that follow): counted at about a gigabyte a second,
 * so a caller fetching 250 KB reports is charged for it, and a detail answer
 * of a few hundred bytes next to nothing.
 */
const MS_PER_BYTE_WRITTEN = 1e-6;

/**
 * The end of every request, the one place its traces are written: usage
 * metering (a keyed request whose key was known, whatever its answer), its
 * caller's cost (for load shedding), the
 * request metrics, and the one log line (not even built below level info;
 * refused requests folded per key, status and second, refused-log.ts).
 * Called by the keyed pipeline and, for the routes without a key, by the
 * Fastify adapter's response hook.
 */
export function finish(
  deps: FinishDeps,
  state: ServingState,
  route: string,
  method: string,
  url: string,
  requestId: string,
  status: number,
  ms: number,
  service: Service | null,
  metered: Metered | null,
  message: string,
): void {
  const access = metered?.access;
  // What load shedding weighs callers by (load-shedding.ts); requests without a known key are one caller.
  // A 503 (shed, or the store away) is answered at once and charged nothing: a shed caller's cost decays until it is served again.
  if (status !== 503) state.costs.charge(access ? access.account.id : '', metered?.body ? ms + metered.body.length * MS_PER_BYTE_WRITTEN : ms);
  if (access && service !== null) deps.meter.record(access.account.id, access.id, service, metered!.now, metered!.failure);
  deps.metrics.observe(route, method, status, ms / 1000);
  if (state.logRequests && state.log && state.refusals.ownLine(state.log, access?.id ?? null, status, metered?.now ?? Date.now())) {
    state.log.info({ reqId: requestId, method, url: redactKeysInUrl(url), status, ms: Math.round(ms * 100) / 100 }, message);
  }
}
