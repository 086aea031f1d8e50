import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendRendered, secondsToBoundary } from '../conditional.js';
import { sendAnswer } from '../answer.js';
import { answerDetail, readDetailRequest } from '../answer-detail.js';
import { answerAt } from '../historical.js';
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
        // Admission runs inside answerDetail, shared with the raw path, not in the access hook.
        config: { service: 'detail', admitsItself: true },
        schema: {
          tags: ['rates'],
          summary: 'Prices of one to ten references',
          params: DetailParams,
          security: [{ apiKey: [] }],
          response: { 200: DetailResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, ...KEYED_ERRORS, 404) },
        },
      },
      async (request, reply) => {
        // The URL as received (before any rewrite), so both paths read the same bytes.
        const url = request.originalUrl;
        const mark = url.indexOf('?');
        const input = readDetailRequest(request.raw.rawHeaders, mark === -1 ? url : url.slice(0, mark), mark === -1 ? null : url.slice(mark + 1), request.ip, deps.time.now());
        input.requestId = request.id;
        if (input.query !== null && new URLSearchParams(input.query).has('at')) return answerAt(deps, request, reply, input);
        const answer = await answerDetail(deps, input);
        request.access = answer.access;
        request.failure = answer.failure?.error ?? null;
        return sendAnswer(reply, answer);
      },
    );
  };
}
