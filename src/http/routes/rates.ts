import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendAnswer } from '../answer.js';
import { answerCatalogue } from '../answer-catalogue.js';
import { answerDetail } from '../answer-detail.js';
import { readKeyedRequest, type KeyedAnswer, type KeyedRequest } from '../answer-keyed.js';
import type { AppDeps } from '../deps.js';
import { answerAt } from '../historical.js';
import { CatalogueQuery, CatalogueResponse, DetailParams, DetailQuery, DetailResponse, errorResponses } from '../schemas.js';

const KEYED_ERRORS = [401, 403, 429];

/**
 * GET /v1/rates (catalogue, no prices) and GET /v1/rates/{keys} (detail). Both
 * are answered by framework-free functions shared with the raw node:http path
 * (fast-detail.ts), which admit the request and read its query themselves, in
 * the documented order; the query schemas here document the parameters.
 */
export function ratesRoutes(deps: AppDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/rates',
      {
        config: { service: 'catalogue', admitsItself: true },
        attachValidation: true,
        schema: {
          tags: ['rates'],
          summary: 'Catalogue of active references (no prices)',
          querystring: CatalogueQuery,
          security: [{ apiKey: [] }],
          response: { 200: CatalogueResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, ...KEYED_ERRORS) },
        },
      },
      async (request, reply) => send(request, reply, await answerCatalogue(deps, readRequest(deps, request))),
    );

    app.get(
      '/v1/rates/:keys',
      {
        config: { service: 'detail', admitsItself: true },
        attachValidation: true,
        schema: {
          tags: ['rates'],
          summary: 'Prices of one to ten references',
          params: DetailParams,
          querystring: DetailQuery,
          security: [{ apiKey: [] }],
          response: { 200: DetailResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, ...KEYED_ERRORS, 404) },
        },
      },
      async (request, reply) => {
        const input = readRequest(deps, request);
        if (input.query !== null && new URLSearchParams(input.query).has('at')) return answerAt(deps, request, reply, input);
        return send(request, reply, await answerDetail(deps, input));
      },
    );
  };
}

/** The URL as received (before any rewrite), so both paths read the same bytes. */
function readRequest(deps: AppDeps, request: FastifyRequest): KeyedRequest {
  const url = request.originalUrl;
  const mark = url.indexOf('?');
  const input = readKeyedRequest(request.raw.rawHeaders, mark === -1 ? url : url.slice(0, mark), mark === -1 ? null : url.slice(mark + 1), request.ip, deps.time.now());
  input.requestId = request.id;
  return input;
}

function send(request: FastifyRequest, reply: FastifyReply, answer: KeyedAnswer): FastifyReply {
  request.access = answer.access;
  request.failure = answer.failure?.error ?? null;
  return sendAnswer(reply, answer);
}
