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

export interface UsageErrorsTable {
  id: Generated<number>;
  account_id: string;
  key_id: string;
  at: number;
  service: string;
  path: string;
  http_status: number;
  error: string;
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

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  store_revision: StoreRevisionTable;
  usage_daily: UsageDailyTable;
  usage_errors: UsageErrorsTable;
  usage_batches: UsageBatchesTable;
  history_minute: HistoryCandlesTable;
  history_hour: HistoryCandlesTable;
  history_day: HistoryCandlesTable;
}
