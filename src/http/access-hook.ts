import type { FastifyInstance, FastifyRequest } from 'fastify';
import { admit } from '../access/admission.js';
import { appendRateLimitHeaders } from '../access/limiter/limiter.js';
import type { Service } from '../domain/plan.js';
import type { AppDeps } from './deps.js';

/**
 * Runs the admission checks on every keyed route before request validation,
 * and meters every request whose key was known, whatever its outcome.
 */
export function installAccessHook(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('access', null);
  app.decorateRequest('failure', null);

  app.addHook('onRequest', async (request, reply) => {
    const service = serviceOf(request);
    if (!service) return;
    admit(deps, service, request.headers['x-api-key'], request.headers.origin, request.ip, deps.time.now(), ({ access, decision }) => {
      request.access = access;
      const headers: string[] = [];
      appendRateLimitHeaders(headers, decision, access.account.limits);
      for (let i = 0; i < headers.length; i += 2) reply.header(headers[i]!, headers[i + 1]);
    });
  });

  app.addHook('onResponse', async (request: FastifyRequest, reply) => {
    const access = request.access;
    if (!access) return;
    const service = serviceOf(request)!;
    const failure = reply.statusCode >= 400 ? { status: reply.statusCode, error: request.failure ?? 'UNKNOWN_ERROR', path: request.url } : null;
    deps.meter.record(access.account.id, access.id, service, deps.time.now(), failure);
  });
}

function serviceOf(request: FastifyRequest): Service | undefined {
  const config = request.routeOptions.config;
  return config.serviceFor ? config.serviceFor(request.query as Record<string, unknown>) : config.service;
}
