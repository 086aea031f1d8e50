import type { Rate } from '../domain/rate.js';
import type { OpenAge, ScreenedOut, SourceView } from '../domain/resolve.js';
import type { SourceState } from '../sources/monitor.js';

/** A rate serialised once, with a fingerprint for ETags. */
export interface PreparedRate {
  readonly rate: Rate;
  readonly json: string;
  /** The entry of the webservice endpoint (one account's list): `{"title","value","unit",…,"date_jalali"}`. */
  readonly webservice: string;
  readonly hash: number;
  /** The same rate shown in toman (itself when the price is not in rial): prepared on first use, then kept. */
  toman(): PreparedRate;
}

/**
 * What the engine saw of the sources when it built a snapshot, kept as it
 * was (source data is never changed in place): `?expand=sources` describes
 * each reference's sources from it, only when asked.
 */
export interface SourcesAtBuild {
  /** Each reference's sources in its priority order, by reference key. */
  readonly ordered: ReadonlyMap<string, readonly SourceView[]>;
  /** Each source's state at the build. */
  readonly states: ReadonlyMap<string, SourceState>;
  /** Fresh values screened out, by reference key, then source name; references with none are absent. */
  readonly screened: ReadonlyMap<string, ReadonlyMap<string, ScreenedOut>>;
  /** How a reference's age was counted (its market's open time); absent or undefined: wall time. */
  readonly age?: (key: string) => OpenAge | undefined;
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
  /** Absent where the snapshot was not built from sources here (one received from another node). */
  readonly sources?: SourcesAtBuild;
}
