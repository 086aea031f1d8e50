import type { SourceValue } from '../../src/domain/rate.js';
import type { Reference } from '../../src/domain/reference.js';
import type { SourceView } from '../../src/domain/resolve.js';

export const NOW = Date.parse('2026-11-21T10:33:07Z');
export const MINUTE = 60_000;

/** A reference for resolution tests: a currency in rials unless `overrides` say otherwise. */
export function testReference(overrides: Partial<Reference> & Pick<Reference, 'key' | 'source_key'>): Reference {
  return {
    title: overrides.key,
    title_en: overrides.key,
    description: 'test',
    unit: 'ریال',
    currency: 'IRR',
    per: 'unit',
    min: null,
    max: null,
    category: 'currency',
    aliases: [],
    status: 'active',
    ...overrides,
  };
}

/** A source as resolution sees it, holding at most one value (`raw`, written `ageMs` before NOW) under `sourceKey`. */
export function sourceView(name: string, sourceKey: string, raw: string | null, options: { ageMs?: number; healthy?: boolean } = {}): SourceView {
  const items = new Map<string, SourceValue>();
  if (raw !== null) items.set(sourceKey, { raw, value: Number(raw), updatedAt: NOW - (options.ageMs ?? 0) });
  return { name, healthy: options.healthy ?? true, maxAgeMs: 5 * MINUTE, items };
}
