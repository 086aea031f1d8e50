import type { FastifyInstance } from 'fastify';
import { authenticate } from '../access/authenticate.js';
import { ApiError } from './errors.js';
import type { AppDeps } from './deps.js';

/**
 * The checks every keyed route runs, in the documented order, before request
 * validation: key (401) → plan and account (403) → browser origin (403).
 */
export function installAccessHook(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('access', null);
  app.addHook('onRequest', async (request) => {
    const service = request.routeOptions.config.service;
    if (!service) return;
    const access = authenticate(deps.directory, request.headers['x-api-key'], service, Date.now());
    request.access = access;
    const origin = request.headers.origin;
    if (origin !== undefined && access.account.origins !== null && !access.account.origins.has(origin)) {
      throw new ApiError('ORIGIN_NOT_ALLOWED', `Origin ${JSON.stringify(origin.slice(0, 200))} is not allowed for this key.`);
    }
  });
}
