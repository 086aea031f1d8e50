import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkOrigin, checkService, identify } from '../access/authenticate.js';
import { rateLimitHeaders } from '../access/limiter/limiter.js';
import { ApiError } from './errors.js';
import type { AppDeps } from './deps.js';

/**
 * The checks every keyed route runs before request validation, in the
 * documented order: key (401, or 429 for an address that keeps failing) →
 * account and plan (403) → origin (403) → rate limit (429). Every request
 * whose key is known counts against its limits, carries the limit headers
 * and is metered, whatever its outcome.
 */
export function installAccessHook(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('access', null);
  app.decorateRequest('failure', null);

  app.addHook('onRequest', async (request, reply) => {
    const service = request.routeOptions.config.service;
    if (!service) return;
    const now = Date.now();
    let access;
    try {
      access = identify(deps.directory, request.headers['x-api-key'], now);
    } catch (error) {
      const wait = deps.failedAttempts.record(request.ip, now);
      if (wait > 0) throw new ApiError('TOO_MANY_FAILED_ATTEMPTS', undefined, { 'retry-after': String(wait) });
      throw error;
    }
    request.access = access;
    const decision = deps.limiter.consume(access.id, access.account.limits, now);
    reply.headers(rateLimitHeaders(decision, access.account.limits));
    checkService(access, service);
    checkOrigin(access, request.headers.origin);
    if (!decision.allowed) {
      throw new ApiError('RATE_LIMIT_EXCEEDED', `The ${decision.window} limit of ${decision.limit} requests is spent; retry in ${decision.retryAfterSeconds} s.`);
    }
  });

  app.addHook('onResponse', async (request: FastifyRequest, reply) => {
    const access = request.access;
    const service = request.routeOptions.config.service;
    if (!access || !service) return;
    const failure = reply.statusCode >= 400 ? { status: reply.statusCode, error: request.failure ?? 'UNKNOWN_ERROR', path: request.url } : null;
    deps.meter.record(access.account.id, access.id, service, Date.now(), failure);
  });
}
