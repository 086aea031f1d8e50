import type { FastifyInstance, FastifyRequest } from 'fastify';
import { admit, type AdmissionRecord } from '../access/admission.js';
import type { AppDeps } from './deps.js';
import { redactUrl } from './url.js';

/**
 * Runs the admission checks on every keyed route before request validation,
 * and meters every request whose key was known, whatever its outcome.
 */
export function installAccessHook(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('access', null);
  app.decorateRequest('failure', null);
  app.decorateRequest('meteredAs', null);

  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    if (!config.service || config.admitsItself) return;
    const record: AdmissionRecord = { access: null, headers: [] };
    try {
      const admitted = admit(deps, config.service, request.headers['x-api-key'], request.headers.origin, request.ip, deps.time.now(), record);
      // Only when the shared limiter asks Redis first (rare).
      if (admitted instanceof Promise) await admitted;
    } finally {
      request.access = record.access;
      const headers = record.headers;
      for (let i = 0; i < headers.length; i += 2) reply.header(headers[i]!, headers[i + 1]);
    }
  });

  app.addHook('onResponse', async (request: FastifyRequest, reply) => {
    const access = request.access;
    if (!access) return;
    const service = request.meteredAs ?? request.routeOptions.config.service!;
    const failure = reply.statusCode >= 400 ? { status: reply.statusCode, error: request.failure ?? 'UNKNOWN_ERROR', path: redactUrl(request.originalUrl) } : null;
    deps.meter.record(access.account.id, access.id, service, deps.time.now(), failure);
  });
}
