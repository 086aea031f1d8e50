import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { UsageResponse } from './schema.js';
import { appUsageReports, MAX_REPORT_DAYS, type UsageReports } from './reports.js';

/** `GET /v1/usage`: the caller's own account usage, on every plan; read from the store at most once a second per account (reports.ts). */
export function usageEndpoint(reports: UsageReports): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/usage',
    service: 'usage',
    query: queryParams({ days: { type: 'integer', minimum: 1, maximum: MAX_REPORT_DAYS, default: 30 } }),
    doc: {
      tags: ['account'],
      summary: 'Daily requests and errors, share per service, and the error log of your account',
      ok: UsageResponse,
      conditional: false,
      errors: [400, 401, 403, 429, 503],
    },
    answer: 'rendered',
    render: async (exchange, account, params) => ({ body: await reports.body(account, params.days, exchange.now), etag: null, maxAgeSeconds: 0 }),
  });
}

export const endpoint = endpointModule({
  schemas: [UsageResponse],
  build: (context) => usageEndpoint(appUsageReports(context)),
  examples: { '/v1/usage': () => '/v1/usage' },
});
