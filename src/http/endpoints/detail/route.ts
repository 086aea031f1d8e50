import { ApiError } from '../../../domain/errors.js';
import { inToman } from '../../../domain/units.js';
import { ratesAt } from '../../../history/at/past-rates.js';
import { checkAtWindow, parseAt } from '../../../history/ranges/range-query.js';
import { renderRatesAt } from '../../../history/at/past-rates-body.js';
import { resolveNames } from '../../../render/reference-keys.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams, type PathParamSpec } from '../../pipeline/params.js';
import { historyCacheSeconds } from '../history/route.js';
import { endpointModule } from '../module.js';
import { DetailResponse } from './schema.js';
import { UNIT } from '../unit-param.js';
import { DetailRenderer } from './render.js';

const PATH = '/v1/rates/:keys';

const KEYS: PathParamSpec = {
  name: 'keys',
  description: 'One to ten comma-separated reference keys or aliases',
  examples: ['usd_sell,coin_emami,gold_18k'],
  invalid: new ApiError('INVALID_KEYS', 'The keys segment is not validly percent-encoded.'),
};

const AT = {
  type: 'string',
  description:
    'The values as served at this moment: each the close of the last candle that ended by then (minute candles where kept, else hourly, else daily; each rate\'s `grain` says which), `updated_at` its own time, never a value recorded later. A date-time with an offset (send `+` as `%2B`), or a date (Jalali 1405/08/10 too): that day\'s close. ASCII, Persian (۱۴۰۵/۰۸/۱۰) or Arabic-Indic digits. Not in the future; service `history`',
  examples: ['2026-11-01T10:00:00+03:30', '2026-11-01', '1405/08/10', '۱۴۰۵/۰۸/۱۰'],
} as const;

/** What `?expand=` can add to each rate. */
export const EXPAND_VALUES = ['sources'] as const;

const DOC = {
  tags: ['rates'],
  summary: 'Prices of one to ten references',
  ok: DetailResponse,
  conditional: true,
  errors: [400, 401, 403, 429, 404],
};

/**
 * `GET /v1/rates/{keys}`: the keys resolved against the snapshot the
 * caller's refresh interval shows, from bodies prepared per snapshot. With
 * `?at=` it is the `history` service instead: the same answer as served at
 * that moment, read from the history store.
 */
export function detailEndpoint(deps: Pick<AppDeps, 'snapshots' | 'history' | 'catalogue' | 'time' | 'markets'>, renderer: DetailRenderer): KeyedEndpoint {
  const atQuery = queryParams({ at: AT, unit: UNIT });
  const at = keyedEndpoint({
    path: PATH,
    service: 'history',
    query: atQuery,
    pathParam: KEYS,
    doc: DOC,
    answer: 'rendered',
    // Checks after the query and the keys segment: `at` itself (400), the keys (404/403), the plan's window (403).
    render: async (exchange, account, params, segment) => {
      const now = exchange.now;
      const { buckets } = deps.history;
      const moment = parseAt(params.at!, now, buckets);
      const named = resolveNames(deps.catalogue, segment, account.allowance);
      checkAtWindow(moment, account.plan.history_days, now, buckets);
      // Each with its market's state at that moment: a closed day answers the last close before it, and says why.
      const rates = (await ratesAt(deps.history, named.references, moment)).map((rate) => {
        const market = deps.markets?.fieldAt(rate.key, moment);
        return market ? { ...rate, market } : rate;
      });
      const rendered = renderRatesAt(params.unit === 'toman' ? rates.map(inToman) : rates, named, deps.time, deps.time.format(now));
      return { ...rendered, maxAgeSeconds: historyCacheSeconds(moment, account.plan.refresh_interval_seconds, now) };
    },
  });
  return keyedEndpoint({
    path: PATH,
    service: 'detail',
    raw: true,
    query: queryParams({ unit: UNIT, expand: { type: 'enum', values: EXPAND_VALUES, description: "sources: each rate lists every configured source's view of it" } }, { at: AT }),
    pathParam: KEYS,
    instead: { param: 'at', endpoint: at },
    doc: DOC,
    answer: 'prepared',
    prepare: (exchange, account, params, segment) => {
      const snapshot = deps.snapshots.forInterval(account.plan.refresh_interval_seconds, exchange.now);
      return renderer.prepare(snapshot, segment, account.allowance, params.unit, params.expand === 'sources');
    },
  });
}

export const endpoint = endpointModule({
  schemas: [DetailResponse],
  build: ({ deps }) => detailEndpoint(deps, new DetailRenderer(deps.catalogue, deps.time)),
  examples: { '/v1/rates/:keys': () => '/v1/rates/usd_free,coin_emami' },
});
