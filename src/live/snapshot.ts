import type { Rate } from '../domain/rate.js';

/** A rate serialised once, with a fingerprint for ETags. */
export interface PreparedRate {
  readonly rate: Rate;
  readonly json: string;
  /** The entry of the legacy per-user feed: `{"title","value","unit","updated_at","date_jalali"}`. */
  readonly legacy: string;
  readonly hash: number;
}

/**
 * Every reference's current rate, immutable once built. Requests pick
 * pre-serialised rates from here; nothing on the request path resolves or
 * serialises a rate.
 */
export interface Snapshot {
  readonly version: number;
  /** Epoch ms of the build. */
  readonly builtAt: number;
  readonly rates: ReadonlyMap<string, PreparedRate>;
  /** Newest `updated_at` of any rate (epoch ms), null before any data. */
  readonly lastUpdate: number | null;
  readonly counts: { readonly ok: number; readonly stale: number; readonly unavailable: number };
}
