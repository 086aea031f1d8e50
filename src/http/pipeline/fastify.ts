import type { FastifyInstance, RouteOptions } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { KeyedRoute } from '../context.js';
import { errorResponses } from '../schemas.js';
import type { KeyedEndpoint } from './endpoint.js';
import { readExchange } from './exchange.js';
import { finish } from './finish.js';
import { serveKeyed, type Pipeline } from './keyed.js';
import { pathParamSchema } from './params.js';

const NOT_MODIFIED = { description: 'Not modified', type: 'null' };
/** The pipeline reads every parameter itself, after admission, by the same specs the schema was made from. */
const NO_VALIDATION = () => () => true;

/**
 * The Fastify side of the pipeline: each keyed endpoint becomes a GET route
 * (and Fastify's HEAD twin) documented from its descriptor, whose handler
 * takes the raw request and response over and runs the pipeline on them, as
 * the raw path does. Every other route is finished (counted, logged) by this
 * module's response hook, through the same `finish`.
 */
export function installPipeline(app: FastifyInstance, pipeline: Pipeline): { register(endpoint: KeyedEndpoint): void; keyedRoutes: readonly KeyedRoute[] } {
  const keyedRoutes: KeyedRoute[] = [];
  app.decorateRequest('piped', false);
  // A route that asks for a key but is not a descriptor's would be admitted and metered by nothing: refused at start-up.
  app.addHook('onRoute', (route) => {
    const endpoint = route.config?.endpoint;
    if (endpoint) {
      if (route.method === 'GET') keyedRoutes.push({ url: route.url, service: endpoint.service });
    } else if (asksForKey(route)) {
      throw new Error(`${route.method} ${route.url} asks for a key but is no endpoint descriptor: add it to src/http/endpoints/ so the pipeline admits, answers and finishes it`);
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    // A keyed request is finished by the pipeline (a stream's response ends only when the stream does).
    if (request.piped) return;
    finish(pipeline.deps, pipeline.state, request.routeOptions.url ?? 'unmatched', request.method, request.originalUrl, request.id, reply.statusCode, reply.elapsedTime, null, null, 'request');
  });
  const register = (endpoint: KeyedEndpoint) => {
    app.get(endpoint.path, { config: { endpoint }, schema: schemaOf(endpoint), validatorCompiler: NO_VALIDATION }, (request, reply) => {
      reply.hijack();
      request.piped = true;
      const url = request.originalUrl;
      const exchange = readExchange(request.raw.rawHeaders, request.method, url, queryStart(url), request.ip, pipeline.deps.time.now(), performance.now() - reply.elapsedTime);
      exchange.requestId = request.id;
      // Checked by the app's own hook already (docs/api.md#order-of-checks).
      exchange.hasHost = true;
      serveKeyed(pipeline, endpoint, exchange, reply.raw);
    });
  };
  return { register, keyedRoutes };
}

/** Where the query starts as Fastify's router reads a URL: after the first `?`, or `#` when that comes first. */
function queryStart(url: string): number {
  const question = url.indexOf('?');
  const hash = url.indexOf('#');
  return hash === -1 || (question !== -1 && question < hash) ? question : hash;
}

function asksForKey(route: RouteOptions): boolean {
  const security = (route.schema as { security?: unknown } | undefined)?.security;
  return Array.isArray(security) && security.some((requirement) => typeof requirement === 'object' && requirement !== null && 'apiKey' in requirement);
}

/** The route schema, for the API document only (see NO_VALIDATION). */
function schemaOf(endpoint: KeyedEndpoint) {
  const doc = endpoint.doc;
  return {
    tags: doc.tags,
    summary: doc.summary,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    ...(endpoint.pathParam === undefined ? {} : { params: pathParamSchema(endpoint.pathParam) }),
    querystring: endpoint.query.schema,
    security: [{ apiKey: [] }],
    response: { 200: doc.ok, ...(doc.conditional ? { 304: NOT_MODIFIED } : {}), ...errorResponses(...doc.errors) },
  };
}
