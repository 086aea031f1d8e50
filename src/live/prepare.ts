import { fnv1a } from '../domain/hash.js';
import { serialiseWebserviceEntry, serialiseRate, type Rate, type RateTime } from '../domain/rate.js';
import { inToman, type RateUnit } from '../domain/units.js';
import type { PreparedRate } from './snapshot.js';

export type { RateTime } from '../domain/rate.js';

/**
 * Serialise a rate for the request path. The engine and every node that
 * receives a snapshot from the bus prepare rates here, so all of them answer
 * with the same bytes. `previous` is kept (same object, same ETag input) when
 * the rate serialises exactly as before.
 */
export function prepareRate(rate: Rate, time: RateTime, previous?: PreparedRate): PreparedRate {
  const json = serialiseRate(rate, time);
  if (previous && previous.json === json) return previous;
  return prepared(rate, json, time);
}

/** A prepared rate in the unit a caller asked for; the toman form is built once per rate, never per request. */
export function preparedIn(rate: PreparedRate, unit: RateUnit): PreparedRate {
  return unit === 'rial' ? rate : rate.toman();
}

function prepared(rate: Rate, json: string, time: RateTime): PreparedRate {
  let toman: PreparedRate | undefined;
  const self: PreparedRate = {
    rate,
    json,
    webservice: serialiseWebserviceEntry(rate, time),
    hash: fnv1a(json),
    toman() {
      if (toman === undefined) {
        const shown = inToman(rate);
        // A price not in rial is the same in either unit: the same object, the same bytes and ETag.
        toman = shown === rate ? self : prepared(shown, serialiseRate(shown, time), time);
      }
      return toman;
    },
  };
  return self;
}
