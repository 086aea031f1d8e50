import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RIAL_CURRENCY } from '../../domain/units.js';
import { parseHistoryRange, withinWindow } from '../../history/range.js';
import { resolveOne } from '../../render/historical.js';
import { renderHistory } from '../../render/history.js';
import { sendRendered } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { historyCacheSeconds } from '../historical.js';
import { errorResponses, HistoryParams, HistoryQuery, HistoryResponse } from '../schemas.js';

/** GET /v1/rates/{key}/history: OHLC candles of one reference (service `history`). */
export function historyRoutes(deps: AppDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/rates/:key/history',
      {
        config: { service: 'history' },
        schema: {
          tags: ['rates'],
          summary: 'Candles (open, high, low, close) of one reference over a range',
          params: HistoryParams,
          querystring: HistoryQuery,
          security: [{ apiKey: [] }],
          response: { 200: HistoryResponse, 304: { description: 'Not modified', type: 'null' }, ...errorResponses(400, 401, 403, 404, 429, 503) },
        },
      },
      async (request, reply) => {
        const now = deps.time.now();
        const account = request.access!.account;
        const { history } = deps;
        // Checks in the documented order: the query (400), the key (404/403), then the plan's window (403).
        const asked = parseHistoryRange(request.query, now, history.buckets, history.minuteRetentionStart(now));
        const reference = resolveOne(deps.catalogue, request.params.key, account.allowance);
        const range = withinWindow(asked, account.plan.history_days, now, history.buckets);
        // Only a rial price changes in toman; any other is the same answer.
        const toman = request.query.unit === 'toman' && reference.currency === RIAL_CURRENCY;
        const candles = range.from < range.to ? await history.rendered(reference.key, range.interval, range.from, range.to, now, toman) : { json: '', count: 0, hash: 0 };
        const rendered = renderHistory({ reference, interval: range.interval, from: range.from, to: range.to, toman }, candles, deps.time, deps.time.format(now));
        return sendRendered(request, reply, rendered, historyCacheSeconds(range.to, account.plan.refresh_interval_seconds, now));
      },
    );
  };
}
