import type { ZoneTime } from '../domain/time.js';
import type { WebhookEndpoint, WebhookEvent, WebhookLogEntry, WebhookRepository } from '../store/webhook-repository.js';
import type { WebhookType } from './events.js';

/** An endpoint as its account sees it: never its secret. */
export interface EndpointView {
  id: string;
  url: string;
  state: 'enabled' | 'disabled';
  rules: string[];
  events: WebhookEvent[];
  /** Since when every attempt has failed; null while it succeeds. */
  failing_since: string | null;
  disabled_reason: string | null;
  created_at: string;
  /** Deliveries waiting to be sent or retried (at most MAX_PENDING_PER_ENDPOINT). */
  pending: number;
  /** Deliveries replaced, undelivered, by a newer event about the same rule or reference, ever. */
  superseded: number;
  /** Deliveries dropped, oldest first, because too many were waiting, ever. */
  dropped: number;
}

/** One entry of the delivery log: the events of one outcome to one endpoint within a minute, the latest one's details. */
export interface DeliveryView {
  at: string;
  endpoint: string;
  /** The delivery's `webhook-id`; null on an endpoint's own line (its disabling). */
  delivery: string | null;
  type: WebhookType | null;
  attempt: number | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  /** `delivered`, `retrying` (tried again later), `given_up` (its 24 h over), `disabled` (the endpoint), `superseded` or `dropped`. */
  outcome: WebhookLogEntry['outcome'];
  /** How many events the entry folds. */
  count: number;
}

export interface WebhookOverview {
  endpoints: EndpointView[];
  deliveries: DeliveryView[];
}

/** Recent log lines shown by default. */
export const DEFAULT_LOG_LINES = 100;

/** An account's endpoints and its latest log lines, newest first: what the CLI, /v1/webhooks and /account show. */
export async function webhookOverview(webhooks: WebhookRepository, accountId: string, time: ZoneTime, lines = DEFAULT_LOG_LINES): Promise<WebhookOverview> {
  const [endpoints, log, pending] = await Promise.all([webhooks.list(accountId), webhooks.log(accountId, lines), webhooks.pendingByEndpoint(accountId)]);
  return { endpoints: endpoints.map((endpoint) => endpointView(endpoint, time, pending.get(endpoint.id) ?? 0)), deliveries: log.map((entry) => deliveryView(entry, time)) };
}

export function endpointView(endpoint: WebhookEndpoint, time: ZoneTime, pending = 0): EndpointView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    state: endpoint.state,
    rules: endpoint.rules,
    events: endpoint.events,
    failing_since: endpoint.failing_since === null ? null : time.format(endpoint.failing_since),
    disabled_reason: endpoint.disabled_reason,
    created_at: time.format(endpoint.created_at),
    pending,
    superseded: endpoint.superseded,
    dropped: endpoint.dropped,
  };
}

function deliveryView(entry: WebhookLogEntry, time: ZoneTime): DeliveryView {
  return {
    at: time.format(entry.at),
    endpoint: entry.endpoint_id,
    delivery: entry.message_id,
    type: entry.type as WebhookType | null,
    attempt: entry.attempt,
    status_code: entry.status_code,
    error: entry.error,
    duration_ms: entry.duration_ms,
    outcome: entry.outcome,
    count: entry.count,
  };
}
