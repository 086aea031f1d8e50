import type { BandCount } from '../domain/resolve.js';
import { NO_DROPS, type DropCount } from './drops.js';
import type { FormatName } from './formats/spec.js';
import { NO_UNKNOWN_KEYS, type UnknownKeys } from './unknown-keys.js';

export type SourceState = 'active' | 'degraded' | 'down';

/** What kind of source it is: a configured `file`, `http` or `manual` source, or `derived` (the config's formulas). */
export const SOURCE_TYPES = ['file', 'http', 'manual', 'derived'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** How a source's data is read: a document format, or `formula` for the derived source. */
export type SourceFormat = FormatName | 'formula';

/** The derived source's formulas: how many, how many gave a value, and which inputs held them back. */
export interface DerivedDetail {
  references: number;
  computed: number;
  /** Input reference keys served stale. */
  stale_inputs: readonly string[];
  /** Input reference keys with no value. */
  missing_inputs: readonly string[];
}

export interface SourceHealth {
  name: string;
  /** Absent in what the monitor tells: the node that shows the health adds it from its config (roles/feed.ts). */
  type?: SourceType;
  state: SourceState;
  /** When the source's kept data was last updated (epoch ms). */
  last_update: number | null;
  age_seconds: number | null;
  /** Why the source is not active, and any values it lost (safe for the public status page); null when all is well. */
  error: string | null;
  /** When the source was last read or polled (epoch ms). */
  last_check: number | null;
  /** Items dropped from the latest document parsed (not a positive finite number, bad or future timestamp). */
  dropped: number;
  /** Values of the kept data outside their reference's sanity band: never served. */
  out_of_range: number;
  /** Fresh values rejected as outliers against the other sources in the latest build: never served. */
  outliers: number;
  /** Fresh values held as an unconfirmed jump in the latest build. */
  held: number;
  /** Values rejected as outliers since start, each counted once. */
  outliers_total: number;
  /** Item keys of the kept document that match no reference: skipped, never served. */
  unknown_keys: UnknownKeys;
  /** The shape the source's document is read in (`formula` for the derived source). */
  format: SourceFormat;
  /** Items of the latest document parsed that gave a value for a catalogue reference (the derived source: formulas that gave one). */
  mapped: number;
  /** Why the latest document's dropped items were dropped, by reason (adds up to `dropped`). */
  dropped_reasons: readonly DropCount[];
  /** Only on the derived source. */
  derived?: DerivedDetail;
}

/** What the monitor knows of one source at a moment. */
export interface HealthFacts {
  name: string;
  maxAgeSeconds: number;
  /** When the kept (last good) data was updated (epoch ms); null before any good read. */
  dataTime: number | null;
  /** Why the latest read failed; null when it succeeded. */
  readError: string | null;
  lastCheck: number | null;
  dropped: number;
  /** Of the dropped items, those stamped beyond the allowed clock skew (absent: none). */
  ahead?: number;
  /** The kept data's values for catalogue references, inside and outside their bands; null until counted. */
  bands: BandCount | null;
  outliers: number;
  held: number;
  outliersTotal: number;
  /** Item keys of the kept document that no reference reads (absent: none). */
  unknownKeys?: UnknownKeys;
  /** Absent: nerkh. */
  format?: FormatName;
  /** Items of the latest document parsed that were kept (absent: none). */
  mapped?: number;
  /** The dropped items by reason (absent: none named). */
  dropReasons?: readonly DropCount[];
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/**
 * The health rule. `down`: no usable data at all. `degraded`: the latest read
 * failed (unreadable, unparsable, or not one usable value in it) while the
 * last good data is kept, or that data is older than its max age, or every
 * value it holds for the catalogue is out of range. Otherwise `active`: a few
 * dropped or out-of-range values do not make a source unhealthy (each
 * reference fails over on its own), but they are named in `error` and counted.
 */
export function assessHealth(facts: HealthFacts, now: number): SourceHealth {
  const age = facts.dataTime === null ? null : Math.max(0, Math.floor((now - facts.dataTime) / 1000));
  const outOfRange = facts.bands?.outOfBand ?? 0;
  const noneInRange = outOfRange > 0 && facts.bands!.inBand === 0;
  let state: SourceState = 'active';
  let reason = facts.readError;
  let rangeIsReason = false;
  if (facts.dataTime === null) state = 'down';
  else if (facts.readError !== null) state = 'degraded';
  else if (age! > facts.maxAgeSeconds) {
    state = 'degraded';
    reason = `data older than ${facts.maxAgeSeconds} s`;
  } else if (noneInRange) {
    state = 'degraded';
    reason = `no usable values (${outOfRange} out of range)`;
    rangeIsReason = true;
  }
  const notes: string[] = [];
  // A failed read already says what it dropped; a kept document's losses are noted beside its state.
  if (facts.readError === null && facts.dropped > 0) notes.push(`${plural(facts.dropped, 'value')} dropped${facts.ahead ? ` (${facts.ahead} stamped ahead of the clock)` : ''}`);
  if (outOfRange > 0 && !rangeIsReason) notes.push(`${plural(outOfRange, 'value')} out of range`);
  if (facts.outliers > 0) notes.push(`${plural(facts.outliers, 'value')} rejected as outlier${facts.outliers === 1 ? '' : 's'}`);
  if (facts.held > 0) notes.push(`${plural(facts.held, 'jump')} held for confirmation`);
  const error = [reason, ...notes].filter((part) => part !== null).join('; ') || null;
  return {
    name: facts.name,
    state,
    last_update: facts.dataTime,
    age_seconds: age,
    error,
    last_check: facts.lastCheck,
    dropped: facts.dropped,
    out_of_range: outOfRange,
    outliers: facts.outliers,
    held: facts.held,
    outliers_total: facts.outliersTotal,
    unknown_keys: facts.unknownKeys ?? NO_UNKNOWN_KEYS,
    format: facts.format ?? 'nerkh',
    mapped: facts.mapped ?? 0,
    dropped_reasons: facts.dropReasons ?? NO_DROPS,
  };
}

/**
 * A source's health as it stands at `now`, from what was known when `health`
 * was taken: the age moves on, and active data that has since outlived its
 * max age is degraded, as the monitor itself would say. A node that serves
 * the ingest leader's view of the sources shows it this way, so ages stay
 * honest however long ago the view was shared.
 */
export function healthAt(health: SourceHealth, now: number, maxAgeSeconds: number | undefined): SourceHealth {
  if (health.last_update === null) return health;
  const age = Math.max(0, Math.floor((now - health.last_update) / 1000));
  if (health.state === 'active' && maxAgeSeconds !== undefined && age > maxAgeSeconds) {
    return { ...health, age_seconds: age, state: 'degraded', error: [`data older than ${maxAgeSeconds} s`, health.error].filter((part) => part !== null).join('; ') };
  }
  return age === health.age_seconds ? health : { ...health, age_seconds: age };
}

/** What of the sources' health changes other than on its own: ages (recomputed by every reader) and last checks (every read moves them). */
export function healthSignature(health: readonly SourceHealth[]): string {
  return JSON.stringify(health.map((s) => [s.name, s.state, s.error, s.last_update, s.dropped, s.out_of_range, s.outliers, s.held, s.outliers_total, s.unknown_keys.count, s.unknown_keys.sample, s.format, s.mapped, s.dropped_reasons]));
}
