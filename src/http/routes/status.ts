import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { computeStatus, type ServiceStatus } from '../../render/service-status.js';
import { renderStatusPage } from '../../web/status-page.js';
import type { AppDeps } from '../deps.js';
import { NoQuery } from '../schemas.js';

/** The service's health now, with `openStreams`: this process's open push streams. What GET /v1/status (keyed, src/http/endpoints/status/route.ts) and the /status page show. */
export function currentStatus(deps: AppDeps, openStreams: () => number): (now: number) => ServiceStatus {
  return (now) =>
    computeStatus(deps.snapshots.latest(), deps.sourceHealth(now), deps.storeState(), deps.cluster(), { history: deps.history.recording(now), openStreams: openStreams() });
}

/** GET /status: the public HTML page. */
export function statusRoutes(deps: AppDeps, current: (now: number) => ServiceStatus): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/status', { schema: { hide: true, querystring: NoQuery } }, async (_request, reply) => {
      const now = deps.time.now();
      const html = renderStatusPage(current(now), deps.time, now, (source) => deps.history.activity(source, now), deps.markets?.states(now) ?? []);
      return reply.header('cache-control', 'no-cache').header('content-type', 'text/html; charset=utf-8').send(html);
    });
  };
}
