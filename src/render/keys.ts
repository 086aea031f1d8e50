import type { Catalogue } from '../catalogue/catalogue.js';
import { KEY_PATTERN, type Reference } from '../domain/reference.js';
import { ApiError } from '../domain/errors.js';

export const MAX_KEYS = 10;

/**
 * The keys segment of the detail path: comma-separated, trimmed, matched
 * case-insensitively, duplicates dropped (first occurrence wins).
 */
export function parseKeyList(segment: string): string[] {
  if (segment.trim() === '') throw new ApiError('INVALID_KEYS', 'The keys segment is empty.');
  const seen = new Set<string>();
  for (const part of segment.split(',')) {
    const key = part.trim();
    if (!KEY_PATTERN.test(key)) {
      throw new ApiError('INVALID_KEYS', key === '' ? 'The keys segment holds an empty key.' : `Invalid key ${JSON.stringify(key.slice(0, 80))}: keys are 1-64 letters, digits, "_", "." or "-".`);
    }
    seen.add(key.toLowerCase());
  }
  if (seen.size > MAX_KEYS) throw new ApiError('RATE_KEYS_LIMIT_EXCEEDED', `${seen.size} distinct keys requested; at most ${MAX_KEYS} are allowed.`);
  return [...seen];
}

/**
 * The keys segment in normal form: the list parseKeyList reads, joined by
 * commas (`USD_free, eur,usd_free` → `usd_free,eur`). Every spelling of a
 * list has this one form, at most MAX_KEYS keys of 64 characters, so it is
 * what caches key answers on. Refuses what parseKeyList refuses.
 */
export function normalKeyList(segment: string): string {
  return parseKeyList(segment).join(',');
}

/** The references a keys segment names, in request order and each once, and the names left out (as in `meta`). */
export interface NamedReferences {
  references: Reference[];
  unknown: string[];
  denied: string[];
}

/** Resolve a keys segment as the detail endpoint does: unknown and not-allowed names are listed, none left is 404 or 403. */
export function resolveNames(catalogue: Catalogue, segment: string, allowance: ReadonlySet<string> | null): NamedReferences {
  const references: Reference[] = [];
  const unknown: string[] = [];
  const denied: string[] = [];
  const seen = new Set<string>();
  for (const name of parseKeyList(segment)) {
    const reference = catalogue.lookup(name);
    if (!reference) unknown.push(name);
    else if (allowance !== null && !allowance.has(reference.key)) {
      if (!seen.has(reference.key)) denied.push(name);
    } else if (!seen.has(reference.key)) references.push(reference);
    if (reference) seen.add(reference.key);
  }
  if (references.length === 0) {
    if (denied.length > 0) throw new ApiError('REFERENCE_NOT_IN_PLAN');
    throw new ApiError('RATE_NOT_FOUND', `No active reference matches ${unknown.map((k) => JSON.stringify(k)).join(', ')}.`);
  }
  return { references, unknown, denied };
}

/** One reference key or alias (the history endpoint): 404 when unknown, 403 when outside the allowance. */
export function resolveOne(catalogue: Catalogue, name: string, allowance: ReadonlySet<string> | null): Reference {
  return resolveNames(catalogue, name, allowance).references[0]!;
}
