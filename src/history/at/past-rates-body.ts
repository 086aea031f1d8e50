import { etagOf, fnv1a } from '../../domain/hash.js';
import { serialiseRate, type Rate, type RateTime } from '../../domain/rate.js';
import { okHead } from '../../render/envelope.js';
import { MAX_KEYS, type NamedReferences } from '../../render/keys.js';

/** The detail envelope around rates read from history (already in the unit asked for). */
export function renderRatesAt(rates: readonly Rate[], named: NamedReferences, time: RateTime, generatedAt: string): { body: string; etag: string } {
  const tail =
    `,"count":${rates.length},"rates":[${rates.map((rate) => serialiseRate(rate, time)).join(',')}]` +
    `,"meta":{"max_keys":${MAX_KEYS},"includes_prices":true,"unknown_keys":${JSON.stringify(named.unknown)},"denied_keys":${JSON.stringify(named.denied)}}}`;
  return { body: `${okHead(generatedAt)}${tail}`, etag: etagOf('a', fnv1a(tail)) };
}
