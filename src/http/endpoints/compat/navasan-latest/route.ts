import { NavasanLatest } from '../../../../compat/navasan-latest.js';
import type { AppDeps } from '../../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../../pipeline/endpoint.js';
import { queryParams } from '../../../pipeline/params.js';
import { endpointModule, type EndpointContext } from '../../module.js';
import { NavasanLatestResponse, NavasanItemSchema } from './schema.js';
import { COMPAT_DOC } from '../doc.js';
import { peerKeyParam } from '../key-param.js';

const query = queryParams({
  api_key: peerKeyParam('navasan'),
  item: {
    type: 'string',
    maxLength: 2_000,
    pattern: /^[A-Za-z0-9_., -]*$/,
    description: 'Comma-separated navasan item names (docs/switching.md lists them); none: every mapped item your plan allows',
    examples: ['usd_sell,sekkeh,18ayar'],
  },
});

/**
 * `GET /compat/navasan/latest` (also with navasan's trailing slash): navasan's
 * latest prices, from answers prepared per snapshot (service `detail`).
 */
export function navasanLatestEndpoint(deps: Pick<AppDeps, 'snapshots'>, latest: NavasanLatest): KeyedEndpoint {
  return keyedEndpoint({
    path: '/compat/navasan/latest',
    spellings: ['/compat/navasan/latest/'],
    service: 'detail',
    raw: true,
    keyParam: 'api_key',
    query,
    doc: {
      ...COMPAT_DOC,
      summary: 'navasan drop-in: latest prices of items',
      description:
        'navasan\'s `/latest/` shape: one property per item, `value` an exact decimal string in navasan\'s unit (toman; thousands of toman for coins and melted gold), `change` since the previous close in the same unit. ' +
        'Items unknown, outside your plan or without a value are left out and named in `x-nerkh-unknown-items`, `x-nerkh-denied-items`, `x-nerkh-unavailable-items`; stale items are served and named in `x-nerkh-stale-items`. Also answered with the trailing slash navasan\'s clients send.',
      ok: NavasanLatestResponse,
      conditional: true,
      errors: [400, 401, 403, 429],
    },
    answer: 'prepared',
    prepare: (exchange, account, params) => latest.prepare(deps.snapshots.forInterval(account.plan.refresh_interval_seconds, exchange.now), params.item, account.allowance),
  });
}

/** navasan's items prepared per snapshot, one per app: its latest prices and the candles' item names read them. */
export function appNavasanLatest(context: EndpointContext): NavasanLatest {
  return context.shared(makeNavasanLatest);
}

function makeNavasanLatest({ deps }: EndpointContext): NavasanLatest {
  return new NavasanLatest(deps.catalogue, deps.time);
}

export const endpoint = endpointModule({
  schemas: [NavasanItemSchema, NavasanLatestResponse],
  build: (context) => navasanLatestEndpoint(context.deps, appNavasanLatest(context)),
  examples: { '/compat/navasan/latest': () => '/compat/navasan/latest?item=usd,sekkeh' },
});
