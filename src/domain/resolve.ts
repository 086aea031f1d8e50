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

/** A value may serve as fresh only if it is finite, positive and younger than its source's max age. */
export function isFresh(value: SourceValue, maxAgeMs: number, now: number): boolean {
  return now - value.updatedAt <= maxAgeMs;
}

/**
 * Failover for one reference: the first source, in priority order, that is
 * healthy and holds a fresh value for the reference's `source_key`; else the
 * newest value any source (or an earlier snapshot) still knows, as `stale`;
 * else `unavailable`.
 */
export function resolveRate(
  reference: Reference,
  sources: readonly SourceView[],
  now: number,
  lastKnown: KnownValue | undefined,
): ResolvedRate {
  const base = { key: reference.key, title: reference.title, unit: reference.unit, source_key: reference.source_key };

  for (const source of sources) {
    if (!source.healthy) continue;
    const value = source.items.get(reference.source_key);
    if (value && isFresh(value, source.maxAgeMs, now)) {
      return { ...base, value: value.raw, updated_at: value.updatedAt, status: 'ok', source: source.name };
    }
  }

  let newest = lastKnown;
  for (const source of sources) {
    const value = source.items.get(reference.source_key);
    if (value && (!newest || value.updatedAt > newest.value.updatedAt)) newest = { value, source: source.name };
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
