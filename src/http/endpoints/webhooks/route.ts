import { ApiError } from '../../../domain/errors.js';
import { okHead } from '../../../render/envelope.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { WebhooksResponse } from './schema.js';

/**
 * `GET /v1/webhooks`: the caller's own webhook endpoints (never their
 * secrets: the overview's views hold none) and delivery log (service
 * `alerts`); read from the store, so never cached.
 */
export function webhooksEndpoint(deps: Pick<AppDeps, 'time' | 'storeReachable' | 'storeFailed' | 'webhookOverview'>): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/webhooks',
    service: 'alerts',
    query: queryParams({}),
    doc: { tags: ['account'], summary: 'Your webhook endpoints and their delivery log', ok: WebhooksResponse, conditional: false, errors: [400, 401, 403, 429, 503] },
    answer: 'rendered',
    render: async (exchange, account) => {
      // A store known to be away answers at once rather than hold the request for a connection timeout.
      if (!deps.storeReachable()) throw unavailable();
      let overview;
      try {
        overview = await deps.webhookOverview(account.id);
      } catch (error) {
        deps.storeFailed(error);
        throw unavailable();
      }
      const body = JSON.stringify({ account: account.username, ...overview });
      return { body: `${okHead(deps.time.format(exchange.now))},${body.slice(1)}`, etag: null, maxAgeSeconds: 0 };
    },
  });
}

function unavailable(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'Webhooks are unavailable right now: the store does not answer. Deliveries wait in the outbox meanwhile.', { 'retry-after': '1' });
}

export const endpoint = endpointModule({
  schemas: [WebhooksResponse],
  build: ({ deps }) => webhooksEndpoint(deps),
  examples: { '/v1/webhooks': () => '/v1/webhooks' },
});
