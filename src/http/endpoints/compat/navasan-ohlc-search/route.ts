import { ohlcRange, renderNavasanCandles } from '../../../../compat/navasan-ohlc.js';
import type { NavasanLatest } from '../../../../compat/navasan-latest.js';
import { etagOf, fnv1a } from '../../../../domain/hash.js';
import { ApiError } from '../../../../domain/errors.js';
import { withinWindow } from '../../../../history/ranges/range-query.js';
import type { AppDeps } from '../../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../../pipeline/endpoint.js';
import { queryParams } from '../../../pipeline/params.js';
import { historyCacheSeconds } from '../../history/route.js';
import { endpointModule } from '../../module.js';
import { NavasanOhlcResponse, NavasanCandleSchema } from './schema.js';
import { COMPAT_DOC } from '../doc.js';
import { appNavasanLatest } from '../navasan-latest/route.js';
import { peerKeyParam } from '../key-param.js';

const bound = (description: string) =>
  ({
    type: 'string',
    required: true,
    maxLength: 40,
    description: `${description}: a Jalali date (1405-08-10 or 1405/08/10), a Gregorian date, or unix seconds; ASCII, Persian or Arabic-Indic digits`,
    examples: ['1405-08-10', '1793824200'],
  }) as const;

const query = queryParams({
  api_key: peerKeyParam('navasan'),
  item: { type: 'string', required: true, maxLength: 40, pattern: /^[A-Za-z0-9_]+$/, description: 'One navasan item name', examples: ['usd_sell'] },
  start: bound('First day'),
  end: bound('Last day, included (a later one is read as today)'),
});

/**
 * `GET /compat/navasan/ohlcSearch` (also with navasan's trailing slash):
 * navasan's daily candles of one item (service `history`; the plan's history
 * window applies as for history).
 */
export function navasanOhlcSearchEndpoint(deps: Pick<AppDeps, 'history' | 'time'>, latest: NavasanLatest): KeyedEndpoint {
  return keyedEndpoint({
    path: '/compat/navasan/ohlcSearch',
    spellings: ['/compat/navasan/ohlcSearch/'],
    service: 'history',
    keyParam: 'api_key',
    query,
    doc: {
      ...COMPAT_DOC,
      summary: 'navasan drop-in: daily candles of one item',
      description:
        'navasan\'s `/ohlcSearch/` shape: daily candles, oldest first, `open`, `high`, `low`, `close` exact decimal strings in the item\'s navasan unit, `date` the Jalali date of the day. Days with no value served are absent. Also answered with the trailing slash navasan\'s clients send.',
      ok: NavasanOhlcResponse,
      conditional: true,
      errors: [400, 401, 403, 404, 429, 503],
    },
    answer: 'rendered',
    render: async (exchange, account, params) => {
      const now = exchange.now;
      const { buckets } = deps.history;
      // Checks in history's order: the range (400), the item (404/403), then the plan's window (403).
      const asked = ohlcRange(params.start, params.end, now, buckets);
      const name = params.item.toLowerCase();
      const mapped = latest.map.byName.get(name);
      if (mapped === undefined) throw new ApiError('RATE_NOT_FOUND', `No navasan item is called ${JSON.stringify(name)}.`);
      if (account.allowance !== null && !account.allowance.has(mapped.reference.key)) throw new ApiError('REFERENCE_NOT_IN_PLAN');
      const range = withinWindow(asked, account.plan.history_days, now, buckets);
      const candles = await deps.history.candles(mapped.reference.key, '1d', range.from, range.to);
      const body = renderNavasanCandles(candles, mapped.unit, deps.time);
      return { body, etag: etagOf('no', fnv1a(body)), maxAgeSeconds: historyCacheSeconds(range.to, account.plan.refresh_interval_seconds, now) };
    },
  });
}

export const endpoint = endpointModule({
  schemas: [NavasanCandleSchema, NavasanOhlcResponse],
  build: (context) => navasanOhlcSearchEndpoint(context.deps, appNavasanLatest(context)),
  examples: { '/compat/navasan/ohlcSearch': () => '/compat/navasan/ohlcSearch?item=usd&start=1405-01-01&end=1405-01-10' },
});
