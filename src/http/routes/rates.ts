import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendRendered, secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { CatalogueQuery, CatalogueResponse, DetailParams, DetailResponse, errorResponses } from '../schemas.js';

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
        config: { service: 'detail' },
        schema: {
          tags: ['rates'],
          summary: 'Prices of one to ten references',
          params: DetailParams,
          security: [{ apiKey: [] }],
          response: { 200: DetailResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, ...KEYED_ERRORS, 404) },
        },
      },
      async (request, reply) => {
        const now = deps.time.now();
        const account = request.access!.account;
        const snapshot = deps.snapshots.forInterval(account.plan.refresh_interval_seconds, now);
        const rendered = deps.detailRenderer.render(snapshot, request.params.keys, account.allowance, deps.time.format(now));
        return sendRendered(request, reply, rendered, secondsToBoundary(account.plan.refresh_interval_seconds, now));
      },
    );
  };
}
