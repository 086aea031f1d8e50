import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { computeStatus, renderStatus } from '../../render/status.js';
import { renderStatusPage } from '../../web/status-page.js';
import { sendRendered, secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { errorResponses, NoQuery, StatusResponse } from '../schemas.js';

/** GET /v1/status (keyed JSON) and GET /status (public HTML page, with `openStreams`: this process's open push streams). */
export function statusRoutes(deps: AppDeps, openStreams?: () => number): FastifyPluginAsyncTypebox {
  const current = (now: number) => computeStatus(deps.snapshots.latest(), deps.sourceHealth(now), deps.storeState(), deps.cluster());

  return async (app) => {
    app.get(
      '/v1/status',
      {
        config: { service: 'status' },
        schema: {
          tags: ['status'],
          summary: 'Service health, last update and the state of every source',
          querystring: NoQuery,
          security: [{ apiKey: [] }],
          response: { 200: StatusResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(401, 403, 429) },
        },
      },
      async (request, reply) => {
        const now = deps.time.now();
        const rendered = renderStatus(current(now), deps.time, deps.time.format(now));
        return sendRendered(request, reply, rendered, secondsToBoundary(request.access!.account.plan.refresh_interval_seconds, now));
      },
    );

    app.get('/status', { schema: { hide: true, querystring: NoQuery } }, async (_request, reply) => {
      const now = deps.time.now();
      const html = renderStatusPage(current(now), deps.time, now, (source) => deps.history.activity(source, now), openStreams?.() ?? null);
      return reply.header('cache-control', 'no-cache').header('content-type', 'text/html; charset=utf-8').send(html);
    });
  };
}
