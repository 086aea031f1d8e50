import type { Catalogue } from '../catalogue/catalogue.js';
import { ApiError } from '../domain/errors.js';
import { etagOf, fnv1a } from '../domain/hash.js';
import { serialiseRate, type Rate, type RateTime } from '../domain/rate.js';
import type { Reference } from '../domain/reference.js';
import { okHead } from './envelope.js';
import { MAX_KEYS, parseKeyList } from './keys.js';

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

/** The detail envelope around rates read from history (already in the unit asked for). */
export function renderRatesAt(rates: readonly Rate[], named: NamedReferences, time: RateTime, generatedAt: string): { body: string; etag: string } {
  const tail =
    `,"count":${rates.length},"rates":[${rates.map((rate) => serialiseRate(rate, time)).join(',')}]` +
    `,"meta":{"max_keys":${MAX_KEYS},"includes_prices":true,"unknown_keys":${JSON.stringify(named.unknown)},"denied_keys":${JSON.stringify(named.denied)}}}`;
  return { body: `${okHead(generatedAt)}${tail}`, etag: etagOf('a', fnv1a(tail)) };
}
