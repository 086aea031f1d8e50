import { keyedEndpoint, type KeyedEndpoint } from '../../../pipeline/endpoint.js';
import { queryParams } from '../../../pipeline/params.js';
import { endpointModule } from '../../module.js';
import { NavasanUsageResponse } from './schema.js';
import { appUsageReports, type UsageReports } from '../../usage/reports.js';
import { COMPAT_DOC } from '../doc.js';
import { peerKeyParam } from '../key-param.js';

/**
 * `GET /compat/navasan/usage` (also with navasan's trailing slash): navasan's
 * usage counts of the caller's account (service `usage`), from the same
 * reads as `/v1/usage`, so the two agree.
 */
export function navasanUsageEndpoint(reports: UsageReports): KeyedEndpoint {
  return keyedEndpoint({
    path: '/compat/navasan/usage',
    spellings: ['/compat/navasan/usage/'],
    service: 'usage',
    keyParam: 'api_key',
    query: queryParams({ api_key: peerKeyParam('navasan') }),
    doc: {
      ...COMPAT_DOC,
      summary: 'navasan drop-in: requests of your account this month, day and hour',
      description:
        "navasan's `/usage/` shape: your account's requests (all keys, failed ones included) this calendar month, today and this hour in the service's zone, counted as `/v1/usage` counts them. Also answered with the trailing slash navasan's clients send.",
      ok: NavasanUsageResponse,
      conditional: false,
      errors: [400, 401, 403, 429, 503],
    },
    answer: 'rendered',
    render: async (exchange, account) => {
      const counts = await reports.counts(account, exchange.now);
      return { body: `{"monthly_usage":${counts.monthly},"daily_usage":${counts.daily},"hourly_usage":${counts.hourly}}`, etag: null, maxAgeSeconds: 0 };
    },
  });
}

export const endpoint = endpointModule({
  schemas: [NavasanUsageResponse],
  build: (context) => navasanUsageEndpoint(appUsageReports(context)),
  examples: { '/compat/navasan/usage': () => '/compat/navasan/usage' },
});
