import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf, fnv1a } from '../domain/hash.js';
import { ApiError } from '../http/errors.js';
import type { Snapshot } from '../live/snapshot.js';
import { MAX_KEYS, parseKeyList } from './keys.js';

export interface Rendered {
  body: string;
  etag: string;
}

/**
 * The detail response for a keys segment: aliases resolved to canonical keys,
 * request order, each reference once, unknown and not-allowed keys listed in
 * `meta`. Only string concatenation of rates serialised when the snapshot was built.
 */
export function renderDetail(
  snapshot: Snapshot,
  catalogue: Catalogue,
  segment: string,
  allowance: ReadonlySet<string> | null,
  generatedAt: string,
): Rendered {
  const requested = parseKeyList(segment);
  const unknown: string[] = [];
  const denied: string[] = [];
  const included = new Set<string>();
  const refused = new Set<string>();
  let rates = '';
  let hash = fnv1a(segment);
  for (const name of requested) {
    const reference = catalogue.lookup(name);
    if (!reference) {
      unknown.push(name);
      continue;
    }
    if (allowance !== null && !allowance.has(reference.key)) {
      if (!refused.has(reference.key)) denied.push(name);
      refused.add(reference.key);
      continue;
    }
    if (included.has(reference.key)) continue;
    included.add(reference.key);
    const prepared = snapshot.rates.get(reference.key);
    if (!prepared) continue;
    rates += rates === '' ? prepared.json : ',' + prepared.json;
    hash = combineHash(hash, prepared.hash);
  }
  if (included.size === 0) {
    if (denied.length > 0) throw new ApiError('REFERENCE_NOT_IN_PLAN');
    throw new ApiError('RATE_NOT_FOUND', `No active reference matches ${unknown.map((k) => JSON.stringify(k)).join(', ')}.`);
  }
  hash = combineHash(hash, denied.length);
  const body =
    `{"success":true,"status":"ok","generated_at":"${generatedAt}","count":${included.size},"rates":[${rates}]` +
    `,"meta":{"max_keys":${MAX_KEYS},"includes_prices":true,"unknown_keys":${JSON.stringify(unknown)},"denied_keys":${JSON.stringify(denied)}}}`;
  return { body, etag: etagOf('d', hash) };
}
