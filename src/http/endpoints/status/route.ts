import type { ServiceStatus } from '../../../render/service-status.js';
import { renderStatus } from '../../../render/service-status.js';
import { secondsToBoundary } from '../../conditional.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { currentStatus } from '../../routes/status.js';
import { endpointModule, type EndpointContext } from '../module.js';
import { StatusResponse } from './schema.js';
import { appStreams } from '../stream/route.js';

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

/** The service's health now, for `GET /v1/status` and the /status page alike (one per app). */
export function appStatus(context: EndpointContext): (now: number) => ServiceStatus {
  return context.shared(makeStatus);
}

function makeStatus(context: EndpointContext): (now: number) => ServiceStatus {
  const streams = appStreams(context);
  return currentStatus(context.deps, () => streams.hub.counts().open);
}

export const endpoint = endpointModule({
  schemas: [StatusResponse],
  build: (context) => statusEndpoint(context.deps, appStatus(context)),
  examples: { '/v1/status': () => '/v1/status' },
});
