import { KEY_PATTERN } from '../domain/reference.js';
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
