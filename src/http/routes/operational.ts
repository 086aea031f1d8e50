import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendJsonText } from '../conditional.js';
import { ApiError } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { errorResponses, HealthResponse, NoQuery } from '../schemas.js';

/** What the probes read: an ingest-only process has these and nothing keyed. */
export type ProbeDeps = Pick<AppDeps, 'time' | 'snapshots' | 'storeReachable' | 'metrics'>;

/** Probes and metrics: no key, never cached. */
export function operationalRoutes(deps: ProbeDeps): FastifyPluginAsyncTypebox {
  const ok = () => `{"success":true,"status":"ok","generated_at":"${deps.time.format(deps.time.now())}"}`;
  return async (app) => {
    app.get('/healthz', { schema: { tags: ['operations'], summary: 'The process is alive', querystring: NoQuery, response: { 200: HealthResponse } } }, async (_request, reply) =>
      sendJsonText(reply, ok()),
    );

    app.get(
      '/readyz',
      { schema: { tags: ['operations'], summary: 'Data is loaded and the store answers', querystring: NoQuery, response: { 200: HealthResponse, ...errorResponses(503) } } },
      async (_request, reply) => {
        if (!deps.snapshots.held) throw new ApiError('SERVICE_UNAVAILABLE', 'No snapshot has been received yet.');
        const snapshot = deps.snapshots.latest();
        if (snapshot.counts.ok + snapshot.counts.stale === 0) throw new ApiError('SERVICE_UNAVAILABLE', 'No rate data has been loaded yet.');
        if (!deps.storeReachable()) throw new ApiError('SERVICE_UNAVAILABLE', 'The account store is not reachable.');
        return sendJsonText(reply, ok());
      },
    );

    const metricsText = { description: 'Prometheus text exposition format', content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } } };
    app.get('/metrics', { schema: { tags: ['operations'], summary: 'Prometheus metrics', querystring: NoQuery, response: { 200: metricsText } } }, async (_request, reply) => {
      const text = await deps.metrics.registry.metrics();
      return reply.header('cache-control', 'no-store').header('content-type', deps.metrics.registry.contentType).send(text);
    });
  };
}
