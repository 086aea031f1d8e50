import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createServer } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createDetailFastPath, type FastPathState } from './http/fast-detail.js';
import { installAccessHook } from './http/access-hook.js';
import { ALLOWED_METHODS, EXPOSED_HEADERS, requestIdFor } from './http/context.js';
import type { AppDeps } from './http/deps.js';
import { installErrorHandling, sendError } from './http/error-handler.js';
import { ApiError } from './domain/errors.js';
import { operationalRoutes } from './http/routes/operational.js';
import { historyRoutes } from './http/routes/history.js';
import { ratesRoutes } from './http/routes/rates.js';
import { statusRoutes } from './http/routes/status.js';
import { usageRoutes } from './http/routes/usage.js';
import { webserviceRoutes } from './http/routes/webservice.js';
import { SHARED_SCHEMAS } from './http/schemas.js';

export type { AppDeps } from './http/deps.js';

/** Build the HTTP application; no I/O happens here, so tests build it and call `inject`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // What the raw detail path needs from the app around it; filled in as the app comes up and goes down.
  const server: FastPathState = { closing: false, log: null, logRequests: false };
  const fastDetail = createDetailFastPath(deps, server);
  const app = Fastify({
    // The detail endpoint is answered before Fastify's routing when it can be (see fast-detail.ts).
    serverFactory: (handler) => {
      const server = createServer((request, response) => {
        if (!fastDetail(request, response)) handler(request, response);
      });
      // Slow or idle clients are bounded by these; no per-socket idle timer to re-arm on every request.
      server.keepAliveTimeout = 5_000;
      server.headersTimeout = 10_000;
      server.requestTimeout = 30_000;
      return server;
    },
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by the onResponse hook below, not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Unknown query parameters are an error, so a typo never silently widens a query.
    ajv: { customOptions: { removeAdditional: false } },
    genReqId: (request) => requestIdFor(request.headers['x-request-id']),
    requestIdHeader: false,
    // Ten 64-character keys and their commas fit well inside this.
    routerOptions: { maxParamLength: 2048, ignoreDuplicateSlashes: false },
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    frameworkErrors: (_error, request, reply) => {
      const code = request.url.startsWith('/v1/rates/') ? 'INVALID_KEYS' : 'NOT_FOUND';
      sendError(reply, new ApiError(code, code === 'INVALID_KEYS' ? 'The keys segment is malformed (bad URL encoding or too long).' : undefined), deps.time, request.id ?? requestIdFor(undefined));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  server.log = app.log;
  server.logRequests = ['trace', 'debug', 'info'].includes(app.log.level);
  app.addHook('preClose', async () => {
    server.closing = true;
  });
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const origin = request.headers.origin;
    if (origin !== undefined) {
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin').header('access-control-expose-headers', EXPOSED_HEADERS);
    }
  });
  installAccessHook(app, deps);
  installErrorHandling(app, deps.time);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.observe(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Nerkh market rates API',
        version: '1.0.0',
        description: 'Read-only rates for gold, coins, currencies, metals, energy and crypto. Send your key in the x-api-key header.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false, uiConfig: { docExpansion: 'list', deepLinking: true } });

  // CORS preflight for every path: the per-account origin rule applies to the real request, which carries the key.
  app.options('/*', { schema: { hide: true } }, async (request, reply) => {
    reply.header('access-control-allow-methods', ALLOWED_METHODS).header('access-control-allow-headers', 'x-api-key, x-request-id, if-none-match, content-type').header('access-control-max-age', '600');
    if (!request.headers.origin) reply.header('allow', ALLOWED_METHODS);
    return reply.code(204).send();
  });

  await app.register(ratesRoutes(deps));
  await app.register(historyRoutes(deps));
  await app.register(statusRoutes(deps));
  await app.register(webserviceRoutes(deps));
  await app.register(usageRoutes(deps));
  await app.register(operationalRoutes(deps));
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => reply.header('cache-control', 'no-cache').send(app.swagger()));
  return app;
}
