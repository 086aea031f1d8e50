import type { Reference } from './reference.js';
import type { ResolvedRate, SourceValue } from './rate.js';
import { findOutliers, isJump, MIN_VALUES_FOR_OUTLIERS, sameLevel, type Screening } from './screening.js';

/** What the resolver needs to know of one source: nothing about files or HTTP. */
export interface SourceView {
  name: string;
  /** False while the source's latest read failed: its kept data may still serve as a stale fallback. */
  healthy: boolean;
  maxAgeMs: number;
  items: ReadonlyMap<string, SourceValue>;
  /** Why the source dropped a catalogue source key of its document (a reason code), for `expand=sources`; absent: none. */
  dropped?: ReadonlyMap<string, string>;
}

export interface KnownValue {
  value: SourceValue;
  source: string;
}

/** Why a fresh value was screened out and never served (the rest of a source's view follows from the view itself). */
export type ScreenedOut = 'outlier' | 'held';

/** A single source's jump that waits for confirmation: whose, and since when (epoch ms). */
export interface JumpHold {
  source: string;
  since: number;
}

export interface Resolution {
  rate: ResolvedRate;
  /** Fresh values screened out, by source name; null when none was. */
  screened: ReadonlyMap<string, ScreenedOut> | null;
  /** The hold to carry into the next resolution of this reference; undefined when none. */
  hold: JumpHold | undefined;
}

/**
 * How a reference's age is counted: only the time its market was open
 * (domain/market-calendar.ts). Absent: every millisecond counts.
 */
export interface OpenAge {
  /** Milliseconds open between two instants. */
  openMs(from: number, to: number): number;
  /** The instant `ms` of open time after `from` has passed. */
  addOpen(from: number, ms: number): number;
}

/** A value's age at `now`: open-market time when its market has a calendar, else wall time. */
export function ageOf(updatedAt: number, now: number, age?: OpenAge): number {
  return age ? age.openMs(updatedAt, now) : now - updatedAt;
}

/**
 * A value may serve as fresh only if it is younger than its source's max age
 * (counting only its market's open time), and not past its own expiry.
 */
export function isFresh(value: SourceValue, maxAgeMs: number, now: number, age?: OpenAge): boolean {
  if (value.expiresAt !== undefined && now >= value.expiresAt) return false;
  // Open time is never more than wall time: a value young by the wall clock needs no calendar.
  const wall = now - value.updatedAt;
  return wall <= maxAgeMs || (age !== undefined && age.openMs(value.updatedAt, now) <= maxAgeMs);
}

/** The first moment (epoch ms) a value is no longer fresh: one past its max age of open time, or its own expiry. */
export function staleFrom(value: SourceValue, maxAgeMs: number, age?: OpenAge): number {
  const aged = age ? age.addOpen(value.updatedAt, maxAgeMs + 1) : value.updatedAt + maxAgeMs + 1;
  return Math.min(aged, value.expiresAt ?? Infinity);
}

/** Whether a value lies inside its reference's sanity band (inclusive; an absent bound is open). */
export function inBand(reference: Reference, value: number): boolean {
  return (reference.min === null || value >= reference.min) && (reference.max === null || value <= reference.max);
}

/** Whether a source's value for a reference may serve as fresh: healthy source, young value, inside the band. */
function servableNow(reference: Reference, source: SourceView, value: SourceValue | undefined, now: number, age?: OpenAge): value is SourceValue {
  return value !== undefined && source.healthy && isFresh(value, source.maxAgeMs, now, age) && inBand(reference, value.value);
}

/**
 * Failover for one reference: the first source, in priority order, that is
 * healthy and holds a fresh value inside the reference's band, unless
 * screening rejects it; else the newest in-band value any source (or an
 * earlier snapshot) still knows, as `stale`; else `unavailable`. A value
 * outside the band, an outlier or a held jump is never served.
 *
 * Screening (see screening.ts): with three or more fresh values, one too far
 * from their median is an outlier. With a jump rule, a value that moved more
 * than `maxJumpPercent` from the last served one (`lastKnown`) is held until
 * another source confirms it or `confirmMs` has passed since `hold.since`.
 */
export function resolveReference(
  reference: Reference,
  sources: readonly SourceView[],
  now: number,
  lastKnown: KnownValue | undefined,
  screening: Screening,
  hold?: JumpHold,
  /** How the reference's age counts (its market's open time); wall time when absent. */
  age?: OpenAge,
): Resolution {
  const base = { key: reference.key, title: reference.title, unit: reference.unit, currency: reference.currency, per: reference.per, source_key: reference.source_key };
  const key = reference.source_key;
  const last = lastKnown && inBand(reference, lastKnown.value.value) ? lastKnown : undefined;

  let fresh = 0;
  for (const source of sources) if (servableNow(reference, source, source.items.get(key), now, age)) fresh++;
  let screened: Map<string, ScreenedOut> | null = null;
  if (fresh >= MIN_VALUES_FOR_OUTLIERS) {
    const values: number[] = [];
    const names: string[] = [];
    for (const source of sources) {
      const value = source.items.get(key);
      if (servableNow(reference, source, value, now, age)) {
        values.push(value.value);
        names.push(source.name);
      }
    }
    for (const index of findOutliers(values, screening)) (screened ??= new Map()).set(names[index]!, 'outlier');
  }
  let nextHold: JumpHold | undefined;
  let newest = last;
  for (const source of sources) {
    const value = source.items.get(key);
    if (!value || !inBand(reference, value.value) || screened?.get(source.name) === 'outlier') continue;
    if (source.healthy && isFresh(value, source.maxAgeMs, now, age)) {
      const since = hold?.source === source.name ? hold.since : now;
      if (
        screening.maxJumpPercent === null ||
        last === undefined ||
        !isJump(value.value, last.value.value, screening.maxJumpPercent) ||
        now - since >= screening.confirmMs ||
        confirmedElsewhere(reference, sources, source, value.value, now, screened, screening.maxJumpPercent, age)
      ) {
        return { rate: { ...base, value: value.raw, updated_at: value.updatedAt, status: 'ok', source: source.name }, screened, hold: nextHold };
      }
      // Held: not served, not even as a stale fallback, until confirmed or held long enough.
      nextHold ??= { source: source.name, since };
      (screened ??= new Map()).set(source.name, 'held');
      continue;
    }
    // Remembered on the way: only needed when no source has a fresh value.
    if (!newest || value.updatedAt > newest.value.updatedAt) newest = { value, source: source.name };
  }

  if (newest) {
    const rate: ResolvedRate = {
      ...base,
      value: newest.value.raw,
      updated_at: newest.value.updatedAt,
      status: 'stale',
      source: newest.source,
      // Its age as open-market time: a closed market's hours add nothing.
      stale_seconds: Math.max(0, Math.floor(ageOf(newest.value.updatedAt, now, age) / 1000)),
    };
    return { rate, screened, hold: nextHold };
  }
  return { rate: { ...base, value: null, updated_at: null, status: 'unavailable', source: null }, screened, hold: nextHold };
}

/** A held jump is confirmed when another source's usable fresh value is at the same level. */
function confirmedElsewhere(
  reference: Reference,
  sources: readonly SourceView[],
  jumping: SourceView,
  value: number,
  now: number,
  screened: ReadonlyMap<string, ScreenedOut> | null,
  maxJumpPercent: number,
  age?: OpenAge,
): boolean {
  for (const other of sources) {
    const its = other.items.get(reference.source_key);
    if (other !== jumping && servableNow(reference, other, its, now, age) && screened?.get(other.name) !== 'outlier' && sameLevel(its.value, value, maxJumpPercent)) return true;
  }
  return false;
}

/** How many of one source's values for catalogue references lie inside and outside their bands. */
export interface BandCount {
  inBand: number;
  outOfBand: number;
}

/**
 * Every source's band count over the catalogue, for the status page and
 * metrics. It depends only on the sources' items, so it is worth computing
 * only when a source changed.
 */
export function countBands(references: readonly Reference[], sources: readonly SourceView[]): Map<string, BandCount> {
  const counts = new Map<string, BandCount>();
  for (const source of sources) {
    const count = { inBand: 0, outOfBand: 0 };
    for (const reference of references) {
      const value = source.items.get(reference.source_key);
      if (value) count[inBand(reference, value.value) ? 'inBand' : 'outOfBand']++;
    }
    counts.set(source.name, count);
  }
  return counts;
}
