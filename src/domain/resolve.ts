import type { Reference } from './reference.js';
import type { ResolvedRate, SourceValue } from './rate.js';

/** What the resolver needs to know of one source: nothing about files or HTTP. */
export interface SourceView {
  name: string;
  /** False while the source's latest read failed: its kept data may still serve as a stale fallback. */
  healthy: boolean;
  maxAgeMs: number;
  items: ReadonlyMap<string, SourceValue>;
}

export interface KnownValue {
  value: SourceValue;
  source: string;
}

/** A value may serve as fresh only if it is younger than its source's max age. */
export function isFresh(value: SourceValue, maxAgeMs: number, now: number): boolean {
  return now - value.updatedAt <= maxAgeMs;
}

/** Whether a value lies inside its reference's sanity band (inclusive; an absent bound is open). */
export function inBand(reference: Reference, value: number): boolean {
  return (reference.min === null || value >= reference.min) && (reference.max === null || value <= reference.max);
}

/**
 * Failover for one reference: the first source, in priority order, that is
 * healthy and holds a fresh value inside the reference's band; else the
 * newest in-band value any source (or an earlier snapshot) still knows, as
 * `stale`; else `unavailable`. A value outside the band is never served.
 */
export function resolveRate(reference: Reference, sources: readonly SourceView[], now: number, lastKnown: KnownValue | undefined): ResolvedRate {
  const base = { key: reference.key, title: reference.title, unit: reference.unit, source_key: reference.source_key };

  let newest = lastKnown && inBand(reference, lastKnown.value.value) ? lastKnown : undefined;
  for (const source of sources) {
    const value = source.items.get(reference.source_key);
    if (!value || !inBand(reference, value.value)) continue;
    if (source.healthy && isFresh(value, source.maxAgeMs, now)) {
      return { ...base, value: value.raw, updated_at: value.updatedAt, status: 'ok', source: source.name };
    }
    // Remembered on the way: only needed when no source has a fresh value.
    if (!newest || value.updatedAt > newest.value.updatedAt) newest = { value, source: source.name };
  }

  if (newest) {
    return {
      ...base,
      value: newest.value.raw,
      updated_at: newest.value.updatedAt,
      status: 'stale',
      source: newest.source,
      stale_seconds: Math.max(0, Math.floor((now - newest.value.updatedAt) / 1000)),
    };
  }
  return { ...base, value: null, updated_at: null, status: 'unavailable', source: null };
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
