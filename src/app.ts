import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createRawPath } from './http/pipeline/raw.js';
import { installPipeline } from './http/pipeline/fastify.js';
import type { Pipeline } from './http/pipeline/keyed.js';
import { RefusedRequestLog } from './http/refused-log.js';
import type { ServingState } from './http/serving-state.js';
import { endpointContext } from './http/endpoints/module.js';
import { API_SCHEMAS, ENDPOINTS } from './http/endpoints/registry.js';
import { appStatus } from './http/endpoints/status/route.js';
import { installPageSecurity } from './http/page-security.js';
import { createClientErrorHandler, createConnectHandler } from './http/connection-errors.js';
import { setEdgeHeaders } from './http/edge-headers.js';
import { ALLOWED_METHODS, isAllowedMethod, METHOD_NOT_ALLOWED, MISSING_HOST, requestIdFor } from './http/context.js';
import type { AppDeps } from './http/deps.js';
import { installErrorHandling, sendError } from './http/error-handler.js';
import { DEFAULT_LOAD_SHEDDING, installLoadShedding, overloadedError } from './http/load-shedding.js';
import { CostAccount } from './http/shedding/cost-account.js';
import { ApiError } from './domain/errors.js';
import { apiDescription, finishDocument } from './http/openapi.js';
import { DOCS_LOGO, DOCS_THEME } from './web/docs-brand.js';
import { operationalRoutes, type ProbeDeps } from './http/routes/operational.js';
import { PreparedDocument } from './http/prepared-document.js';
import { pageRoutes } from './http/routes/pages.js';
import { statusRoutes } from './http/routes/status.js';
import { NoQuery, SHARED_SCHEMAS } from './http/schemas.js';
import { routableUrl } from './http/url.js';
import { lazySerializers } from './http/lazy-serializers.js';

export type { AppDeps } from './http/deps.js';

/** Request line and headers together; Node refuses more with 431 (answered in the envelope). */
const MAX_HEADER_BYTES = 16_384;

/** Build the HTTP application; no I/O happens here, so tests build it and call `inject`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // What the request paths need from the app around them; filled in as the app comes up and goes down.
  const limits = { ...DEFAULT_LOAD_SHEDDING, ...deps.loadShedding };
  const state: ServingState = { closing: false, underPressure: false, shedding: false, costs: new CostAccount(), overloaded: overloadedError(limits.retryAfterSeconds), log: null, logRequests: false, refusals: new RefusedRequestLog() };
  const pipeline: Pipeline = { deps, state };
  // Every keyed endpoint (registry.ts), as its descriptors: the raw path and the Fastify routes both serve them through the pipeline.
  const built = endpointContext(deps);
  const endpoints = ENDPOINTS.flatMap((module) => module.build(built.context));
  const status = appStatus(built.context);
  const rawPath = createRawPath(pipeline, endpoints);
  const spellings = new Map(endpoints.flatMap((endpoint) => (endpoint.spellings ?? []).map((spelling) => [spelling, endpoint.path] as const)));
  const app = Fastify({
    // The endpoints marked raw (detail, catalogue, webservice) are answered before Fastify's routing when they can be (see pipeline/raw.ts).
    serverFactory: (handler) => {
      const onRequest = (request: IncomingMessage, response: ServerResponse) => {
        if (!rawPath(request, response)) handler(request, response);
      };
      const server = createServer(
        // Node checks header and request timeouts every 30 s by default; a slow-header client is cut off within a second of its 10 s.
        // A missing Host is refused by our own hooks, in the envelope, rather than by Node with a bare 400.
        { connectionsCheckingInterval: 1_000, maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false },
        onRequest,
      );
      // Slow or idle clients are bounded by these; no per-socket idle timer to re-arm on every request.
      server.keepAliveTimeout = 5_000;
      server.headersTimeout = 10_000;
      server.requestTimeout = 30_000;
      server.on('connect', createConnectHandler(deps));
      // An Expect other than 100-continue is ignored (RFC 9110 allows it) instead of Node's bare 417.
      server.on('checkExpectation', onRequest);
      return server;
    },
    clientErrorHandler: createClientErrorHandler(deps),
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by the pipeline's finish (pipeline/finish.ts), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Unknown query parameters are an error, so a typo never silently widens a query.
    ajv: { customOptions: { removeAdditional: false } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    requestIdHeader: false,
    rewriteUrl: (request) => routableUrl(request.url!, spellings),
    // No parameter may be cut short by the router: an overlong keys segment is the route's to refuse, after admission.
    routerOptions: { maxParamLength: MAX_HEADER_BYTES, ignoreDuplicateSlashes: false },
    forceCloseConnections: 'idle',
    // Answered by the hook below, in the envelope.
    return503OnClosing: false,
    frameworkErrors: (_error, request, reply) => {
      sendError(reply, new ApiError('BAD_REQUEST', 'The URL is malformed.'), deps.time, request.id ?? requestIdFor(undefined));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  state.log = app.log;
  state.logRequests = ['trace', 'debug', 'info'].includes(app.log.level);
  app.addHook('preClose', async () => {
    state.closing = true;
  });
  // The refusals folded in the running second are written, not lost with the process.
  app.addHook('onClose', async () => state.refusals.flush());
  for (const schema of API_SCHEMAS) app.addSchema(schema);
  const keyed = installPipeline(app, pipeline);
  app.decorate('keyedRoutes', keyed.keyedRoutes);
  for (const [name, value] of built.exposed) app.decorate(name, value);

  app.addHook('onRequest', async (request, reply) => setEdgeHeaders(reply, request.id, request.headers.origin));
  // Method and form first (docs/api.md#order-of-checks), before load shedding and any key check.
  app.addHook('onRequest', async (request) => {
    if (state.closing) throw new ApiError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry shortly.', { 'retry-after': '1' });
    if (!isAllowedMethod(request.method)) throw METHOD_NOT_ALLOWED;
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) throw MISSING_HOST;
  });
  await installLoadShedding(app, limits, state);
  installErrorHandling(app, deps.time);
  installPageSecurity(app, deps.frameAncestors);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Nerkh market rates API',
        version: '1.0.0',
        description: apiDescription(),
        license: { name: 'MIT', identifier: 'MIT' },
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'For /metrics only, when the server sets NERKH_METRICS_TOKEN.' },
        },
      },
    },
    transformObject: (document) => finishDocument('openapiObject' in document ? document.openapiObject : document.swaggerObject, [{ url: '/', description: 'The server that serves this document' }]),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The plugin's own policy stays off: its pages get the same policy as every other page (page-security.ts), which the UI runs under.
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false, logo: DOCS_LOGO, theme: DOCS_THEME, uiConfig: { docExpansion: 'list', deepLinking: true } });

  // CORS preflight for every path: the per-account origin rule applies to the real request, which carries the key.
  app.options('/*', { schema: { hide: true } }, async (request, reply) => {
    reply.header('access-control-allow-methods', ALLOWED_METHODS).header('access-control-allow-headers', 'x-api-key, x-request-id, if-none-match, content-type').header('access-control-max-age', '600');
    if (!request.headers.origin) reply.header('allow', ALLOWED_METHODS);
    return reply.code(204).send();
  });

  // What the endpoints started (streams, worker threads) ends with the app: before the drain, or once closed.
  for (const hook of built.preClose) app.addHook('preClose', async () => hook());
  for (const hook of built.onClose) app.addHook('onClose', async () => hook());
  for (const endpoint of endpoints) keyed.register(endpoint);
  await app.register(statusRoutes(deps, status));
  await app.register(operationalRoutes(deps));
  await app.register(pageRoutes());
  const description = new PreparedDocument(() => app.swagger());
  app.get('/openapi.json', { schema: { hide: true, querystring: NoQuery } }, async (request, reply) => description.send(request, reply));
  return app;
}

/**
 * An ingest-only process (`--role ingest`) serves no API: it answers the
 * probes and /metrics only, so a proxy never sends it a keyed request and the
 * shared limits count only the nodes that serve.
 */
export async function buildProbeApp(deps: ProbeDeps & { logger: AppDeps['logger'] }): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    requestIdHeader: false,
    forceCloseConnections: 'idle',
  });
  app.addHook('onRequest', async (request, reply) => {
    setEdgeHeaders(reply, request.id, undefined);
    if (!isAllowedMethod(request.method)) throw METHOD_NOT_ALLOWED;
  });
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  installErrorHandling(app, deps.time);
  await app.register(operationalRoutes(deps));
  return app;
}
