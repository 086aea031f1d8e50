import { fnv1a } from '../domain/hash.js';
import { serialiseLegacyEntry, serialiseRate, type Rate } from '../domain/rate.js';
import type { PreparedRate } from './snapshot.js';

/** What serialising a rate needs of the clock: the zone's timestamps and Jalali dates. */
export interface RateTime {
  format(ms: number): string;
  jalaliDate(ms: number): string;
}

/**
 * Serialise a rate for the request path. The engine and every node that
 * receives a snapshot from the bus prepare rates here, so all of them answer
 * with the same bytes. `previous` is kept (same object, same ETag input) when
 * the rate serialises exactly as before.
 */
export function prepareRate(rate: Rate, time: RateTime, previous?: PreparedRate): PreparedRate {
  const json = serialiseRate(rate, (ms) => time.format(ms));
  if (previous && previous.json === json) return previous;
  return { rate, json, legacy: serialiseLegacyEntry(rate, time), hash: fnv1a(json) };
}
