import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendRendered, secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { sendHistoricalDetail } from '../historical.js';
import { CatalogueQuery, CatalogueResponse, DetailParams, DetailQuery, DetailResponse, errorResponses } from '../schemas.js';

const KEYED_ERRORS = [401, 403, 429];

/** GET /v1/rates (catalogue, no prices) and GET /v1/rates/{keys} (detail). */
export function ratesRoutes(deps: AppDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/rates',
      {
        config: { service: 'catalogue' },
        schema: {
          tags: ['rates'],
          summary: 'Catalogue of active references (no prices)',
          querystring: CatalogueQuery,
          security: [{ apiKey: [] }],
          response: { 200: CatalogueResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, ...KEYED_ERRORS) },
        },
      },
      async (request, reply) => {
        const now = deps.time.now();
        const rendered = deps.catalogueRenderer.render(deps.time.format(now), request.query.category, request.query.q);
        return sendRendered(request, reply, rendered, secondsToBoundary(request.access!.account.plan.refresh_interval_seconds, now));
      },
    );

    app.get(
      '/v1/rates/:keys',
      {
        // With `at=` it reads history, and counts as the `history` service.
        config: { service: 'detail', serviceFor: (query) => (query.at === undefined ? 'detail' : 'history') },
        schema: {
          tags: ['rates'],
          summary: 'Prices of one to ten references (now, or as served at a past moment)',
          params: DetailParams,
          querystring: DetailQuery,
          security: [{ apiKey: [] }],
          response: { 200: DetailResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, ...KEYED_ERRORS, 404, 503) },
        },
      },
      async (request, reply) => {
        if (request.query.at !== undefined) return sendHistoricalDetail(deps, request, reply, request.params.keys, request.query.at);
        const now = deps.time.now();
        const account = request.access!.account;
        const snapshot = deps.snapshots.forInterval(account.plan.refresh_interval_seconds, now);
        const rendered = deps.detailRenderer.render(snapshot, request.params.keys, account.allowance, deps.time.format(now));
        return sendRendered(request, reply, rendered, secondsToBoundary(account.plan.refresh_interval_seconds, now));
      },
    );
  };
}
