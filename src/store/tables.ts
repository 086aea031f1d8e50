import type { Generated } from 'kysely';

/** Times are epoch milliseconds in every dialect; JSON columns are text. */
export interface AccountsTable {
  id: string;
  username: string;
  plan: string;
  status: 'active' | 'suspended';
  references_json: string | null;
  origins_json: string | null;
  overrides_json: string | null;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  /** Short public id, for listing and revoking; never the key. */
  id: string;
  account_id: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  hash: string;
  label: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** One row, bumped by every change to accounts or keys: the server polls it to reload. */
export interface StoreRevisionTable {
  id: number;
  revision: number;
}

export interface UsageDailyTable {
  account_id: string;
  key_id: string;
  day: string;
  service: string;
  ok: number;
  errors: number;
}

/**
 * Requests of an account per hour in the zone (`2026-11-28T16`), all keys and
 * services together, failed ones included: what navasan's `hourly_usage`
 * reports. Kept two days.
 */
export interface UsageHourlyTable {
  account_id: string;
  hour: string;
  requests: number;
}

/**
 * One entry of an account's error log: every failure of one error code on one
 * service within one minute, folded into one row (unique on account, service,
 * error and minute). `count` says how many; key, time, path and status are the
 * latest one's.
 */
export interface UsageErrorsTable {
  id: Generated<number>;
  account_id: string;
  key_id: string;
  /** The latest failure folded in (epoch ms). */
  at: number;
  /** The start of the minute the entry folds (epoch ms, a multiple of 60,000). */
  minute: number;
  service: string;
  path: string;
  http_status: number;
  error: string;
  count: number;
}

/** Usage batches already written, so a batch sent twice counts once. */
export interface UsageBatchesTable {
  id: string;
  applied_at: number;
}

/** One OHLC candle of a reference (history_minute, history_hour, history_day): values are number text, times epoch ms. */
export interface HistoryCandlesTable {
  reference: string;
  start: number;
  open: string;
  high: string;
  low: string;
  close: string;
  points: number;
  source: string;
  close_at: number;
}

/** One webhook endpoint of an account; rules and events are JSON arrays of text. */
export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  /** `whsec_…`: the shared secret every delivery is signed with. Never logged, never listed. */
  secret: string;
  rules_json: string;
  events_json: string;
  state: 'enabled' | 'disabled';
  /** The first failed attempt since the last success (epoch ms); null while it succeeds. */
  failing_since: number | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
  /** Deliveries replaced, before they were delivered, by a newer event about the same rule or reference. */
  superseded: Generated<number>;
  /** Deliveries dropped, oldest first, when more than the cap were pending. */
  dropped: Generated<number>;
}

/** The last evaluated state of one subject (`rule:<rule>` or `stale:<reference>`) of one endpoint. */
export interface WebhookAlertStatesTable {
  endpoint_id: string;
  subject: string;
  state: string;
  /** Since when (epoch ms) the subject has been in this state. */
  since: number;
}

/** One delivery: its id is the `webhook-id` of every attempt. */
export interface WebhookOutboxTable {
  id: string;
  endpoint_id: string;
  /** What it is about (`rule:<rule>`, `stale:<reference>`); null on deliveries queued before subjects were kept. */
  subject: string | null;
  type: string;
  body: string;
  created_at: number;
  attempts: number;
  next_attempt_at: number;
  state: 'pending' | 'delivered' | 'failed';
  finished_at: number | null;
}

/**
 * One entry of an account's webhook log: every attempt with one outcome to
 * one endpoint within one minute (or deliveries superseded or dropped, an
 * endpoint disabled), folded into one row (unique on endpoint, outcome and
 * minute). `count` says how many; the other fields are the latest one's.
 */
export interface WebhookLogTable {
  id: Generated<number>;
  account_id: string;
  endpoint_id: string;
  message_id: string | null;
  type: string | null;
  /** The latest event folded in (epoch ms). */
  at: number;
  /** The start of the minute the entry folds (epoch ms, a multiple of 60,000). */
  minute: number;
  count: number;
  attempt: number | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  outcome: 'delivered' | 'retrying' | 'given_up' | 'disabled' | 'superseded' | 'dropped';
}

/** A manual source's current price for one reference (canonical key): number text as set, times epoch ms. */
export interface ManualPricesTable {
  source: string;
  /** The reference's canonical key. */
  reference: string;
  /** Decimal number text, exactly as set. */
  value: string;
  set_at: number;
  /** When the price stops being fresh (epoch ms); null: it stays fresh until cleared or set again. */
  expires_at: number | null;
  note: string | null;
}

/** One change to a manual price: `set` (with the value and expiry set) or `clear`. */
export interface ManualPriceLogTable {
  id: Generated<number>;
  source: string;
  reference: string;
  action: 'set' | 'clear';
  value: string | null;
  expires_at: number | null;
  note: string | null;
  at: number;
}

/** An operator's declaration for one local day (YYYY-MM-DD in the market's zone) of a market: `close` with its reason, or `open`. */
export interface MarketCalendarTable {
  market: string;
  day: string;
  action: 'close' | 'open';
  reason: string | null;
  set_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  store_revision: StoreRevisionTable;
  usage_daily: UsageDailyTable;
  usage_hourly: UsageHourlyTable;
  usage_errors: UsageErrorsTable;
  usage_batches: UsageBatchesTable;
  history_minute: HistoryCandlesTable;
  history_hour: HistoryCandlesTable;
  history_day: HistoryCandlesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_alert_states: WebhookAlertStatesTable;
  webhook_outbox: WebhookOutboxTable;
  webhook_log: WebhookLogTable;
  manual_prices: ManualPricesTable;
  manual_price_log: ManualPriceLogTable;
  market_calendar: MarketCalendarTable;
}
