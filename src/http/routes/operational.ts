import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendJsonText } from '../conditional.js';
import { ApiError } from '../../domain/errors.js';
import { Type } from '@sinclair/typebox';
import { bearerCheck } from '../bearer.js';
import { okHead } from '../../render/envelope.js';
import type { AppDeps } from '../deps.js';
import { ErrorSchema, errorResponses, HealthResponse, NoQuery } from '../schemas.js';

/** What the probes read: an ingest-only process has these and nothing keyed. */
export type ProbeDeps = Pick<AppDeps, 'time' | 'snapshots' | 'storeReachable' | 'metrics' | 'metricsToken' | 'waitingFor'>;

/** Probes and metrics: no key, never cached. */
export function operationalRoutes(deps: ProbeDeps): FastifyPluginAsyncTypebox {
  const ok = () => `${okHead(deps.time.format(deps.time.now()))}}`;
  return async (app) => {
    app.get('/healthz', { schema: { tags: ['operations'], summary: 'The process is alive', querystring: NoQuery, response: { 200: HealthResponse } } }, async (_request, reply) =>
      sendJsonText(reply, ok()),
    );

    app.get(
      '/readyz',
      { schema: { tags: ['operations'], summary: 'Data is loaded and the store answers', querystring: NoQuery, response: { 200: HealthResponse, ...errorResponses(503) } } },
      async (_request, reply) => {
        // The answer says what the node waits for (Redis, a leader, its sources), so a probe's log tells the operator what to fix.
        const because = () => {
          const why = deps.waitingFor?.(deps.time.now());
          return why ? `: ${why}.` : '.';
        };
        if (!deps.snapshots.held) throw new ApiError('SERVICE_UNAVAILABLE', `No snapshot has been received yet${because()}`);
        const snapshot = deps.snapshots.latest();
        if (snapshot.counts.ok + snapshot.counts.stale === 0) throw new ApiError('SERVICE_UNAVAILABLE', `No rate data has been loaded yet${because()}`);
        if (!deps.storeReachable()) throw new ApiError('SERVICE_UNAVAILABLE', 'The account store is not reachable.');
        return sendJsonText(reply, ok());
      },
    );

    const metricsText = { description: 'Prometheus text exposition format', content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } } };
    // With NERKH_METRICS_TOKEN set, a scrape must bring it; checked first, before the query (as a key is).
    const check = deps.metricsToken === null ? () => {} : bearerCheck(deps.metricsToken);
    const metricsSchema = {
      tags: ['operations'],
      summary: 'Prometheus metrics',
      description: 'Open unless the server sets NERKH_METRICS_TOKEN; then send it as `Authorization: Bearer <token>`.',
      querystring: NoQuery,
      security: [{}, { metricsToken: [] }] as Record<string, string[]>[],
      response: { 200: metricsText, 401: Type.Ref(ErrorSchema, { description: 'The server asks for a metrics token and none, or another, came.' }) },
    };
    app.get('/metrics', { onRequest: async (request) => check(request.headers.authorization), schema: metricsSchema }, async (_request, reply) => {
      const text = await deps.metrics.registry.metrics();
      return reply.header('cache-control', 'no-store').header('content-type', deps.metrics.registry.contentType).send(text);
    });
  };
}
