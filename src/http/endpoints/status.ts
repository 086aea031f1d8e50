import type { ServiceStatus } from '../../render/status.js';
import { renderStatus } from '../../render/status.js';
import { secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../pipeline/endpoint.js';
import { queryParams } from '../pipeline/params.js';
import { StatusResponse } from '../schemas.js';

/** `GET /v1/status`: the service's health, rendered per request from `current` (shared with the public /status page). */
export function statusEndpoint(deps: Pick<AppDeps, 'time'>, current: (now: number) => ServiceStatus): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/status',
    service: 'status',
    query: queryParams({}),
    doc: { tags: ['status'], summary: 'Service health, last update and the state of every source', ok: StatusResponse, conditional: true, errors: [401, 403, 429] },
    answer: 'rendered',
    render: (exchange, account) => {
      const now = exchange.now;
      return { ...renderStatus(current(now), deps.time, deps.time.format(now)), maxAgeSeconds: secondsToBoundary(account.plan.refresh_interval_seconds, now) };
    },
  });
}
