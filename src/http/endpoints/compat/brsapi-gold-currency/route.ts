import { BrsapiMarket } from '../../../../compat/brsapi-market.js';
import type { AppDeps } from '../../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../../pipeline/endpoint.js';
import { queryParams } from '../../../pipeline/params.js';
import { endpointModule } from '../../module.js';
import { BrsapiMarketResponse, BrsapiItemSchema } from './schema.js';
import { COMPAT_DOC } from '../doc.js';
import { peerKeyParam } from '../key-param.js';

/**
 * `GET /compat/brsapi/Api/Market/Gold_Currency.php` (also without `Api/`):
 * BrsApi's gold, currency and crypto lists, prepared per snapshot and plan
 * (service `detail`).
 */
export function brsapiGoldCurrencyEndpoint(deps: Pick<AppDeps, 'snapshots'>, market: BrsapiMarket): KeyedEndpoint {
  return keyedEndpoint({
    path: '/compat/brsapi/Api/Market/Gold_Currency.php',
    spellings: ['/compat/brsapi/Market/Gold_Currency.php'],
    service: 'detail',
    raw: true,
    keyParam: 'key',
    query: queryParams({ key: peerKeyParam('BrsApi') }),
    doc: {
      ...COMPAT_DOC,
      summary: 'BrsApi drop-in: gold, currency and cryptocurrency prices',
      description:
        'BrsApi\'s `Gold_Currency.php` shape: `price` and `change_value` JSON numbers written from the exact decimal (toman for Iranian prices, dollars for world ones). Only your plan\'s references appear; those left out are named in `x-nerkh-denied-items` and `x-nerkh-unavailable-items`, stale ones in `x-nerkh-stale-items`. Also answered at `/compat/brsapi/Market/Gold_Currency.php`.',
      ok: BrsapiMarketResponse,
      conditional: true,
      errors: [400, 401, 403, 429],
    },
    answer: 'prepared',
    prepare: (exchange, account) => market.prepare(deps.snapshots.forInterval(account.plan.refresh_interval_seconds, exchange.now), account.allowance),
  });
}

export const endpoint = endpointModule({
  schemas: [BrsapiItemSchema, BrsapiMarketResponse],
  build: ({ deps }) => brsapiGoldCurrencyEndpoint(deps, new BrsapiMarket(deps.catalogue, deps.time)),
  examples: { '/compat/brsapi/Api/Market/Gold_Currency.php': () => '/compat/brsapi/Api/Market/Gold_Currency.php' },
});
