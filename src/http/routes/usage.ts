import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ERROR_LOG_DAYS } from '../../store/usage.js';
import { buildUsageReport } from '../../render/usage.js';
import type { AppDeps } from '../deps.js';
import { errorResponses, UsageQuery, UsageResponse } from '../schemas.js';

/** GET /v1/usage: the caller's own account usage, on every plan. */
export function usageRoutes(deps: AppDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/usage',
      {
        config: { service: 'usage' },
        schema: {
          tags: ['account'],
          summary: 'Daily requests and errors, share per service, and the error log of your account',
          querystring: UsageQuery,
          security: [{ apiKey: [] }],
          response: { 200: UsageResponse, ...errorResponses(400, 401, 403, 429) },
        },
      },
      async (request, reply) => {
        const access = request.access!;
        const days = request.query.days ?? 30;
        const now = deps.time.now();
        // Counts still in memory are written first, so the report includes every request served so far.
        await deps.meter.flush();
        const fromDay = deps.time.day(now - (days - 1) * 86_400_000);
        const since = now - Math.min(days, ERROR_LOG_DAYS) * 86_400_000;
        const [rows, errors] = await Promise.all([deps.usage.daily(access.account.id, fromDay), deps.usage.errors(access.account.id, since)]);
        const report = buildUsageReport({ username: access.account.username, plan: access.account.plan.name }, days, now, deps.time, rows, errors);
        // Not a hot path: the response schema serialises it.
        return reply.header('cache-control', 'private, no-cache').send({ success: true, status: 'ok', generated_at: deps.time.format(now), ...report });
      },
    );
  };
}
