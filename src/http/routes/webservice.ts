import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendRendered, secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../../domain/errors.js';
import { errorResponses, UnitQuery, WebserviceParams, WebserviceResponse } from '../schemas.js';

/** GET /webservice/{username}: the legacy flat feed of the account's allowance, for old rate boards. */
export function webserviceRoutes(deps: AppDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webservice/:username',
      {
        config: { service: 'webservice' },
        schema: {
          tags: ['legacy'],
          summary: 'Legacy per-user feed (flat shape, Jalali dates)',
          params: WebserviceParams,
          querystring: UnitQuery,
          security: [{ apiKey: [] }],
          response: { 200: WebserviceResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(401, 403, 429) },
        },
      },
      async (request, reply) => {
        const account = request.access!.account;
        // The same answer for a stranger's username and one that does not exist.
        if (request.params.username !== account.username) throw new ApiError('SERVICE_NOT_ACTIVE', 'This feed is not available to this API key.');
        const now = deps.time.now();
        const snapshot = deps.snapshots.forInterval(account.plan.refresh_interval_seconds, now);
        const rendered = deps.legacyRenderer.render(snapshot, account.allowance, deps.time.format(now), now, request.query.unit);
        return sendRendered(request, reply, rendered, secondsToBoundary(account.plan.refresh_interval_seconds, now));
      },
    );
  };
}
