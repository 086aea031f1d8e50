import { combineHash, etagOf, fnv1a } from '../../domain/hash.js';
import type { Reference } from '../../domain/reference.js';
import type { ZoneTime } from '../../domain/time.js';
import { RIAL_CURRENCY, TOMAN_CURRENCY, tomanLabel } from '../../domain/units.js';
import { okHead } from '../../render/envelope.js';
import type { Interval } from '../ranges/buckets.js';
import type { RenderedCandles } from '../ranges/range-render.js';


/** What a history body says besides its candles. */
export interface HistoryBodyHead {
  /** What the body says of the reference (a render worker gets only these fields). */
  reference: Pick<Reference, 'key' | 'title' | 'unit' | 'currency' | 'per'>;
  interval: Interval;
  from: number;
  to: number;
  /** `?unit=toman`: a rial reference is shown in toman (its candles rendered so by the reader). */
  toman?: boolean;
}

/**
 * The body of `GET /v1/rates/{key}/history`. The candles come rendered (their
 * values are the served number text, never a JS number); `t_jalali` is the
 * candle start in the Solar Hijri calendar, `1405/08/30 14:00:00`.
 */
export function renderHistory(head: HistoryBodyHead, candles: RenderedCandles, time: ZoneTime, generatedAt: string): { body: string; etag: string } {
  const { reference } = head;
  // In toman (docs/api.md#units-and-precision) the label and currency say so; the candles come divided already.
  const toman = head.toman === true && reference.currency === RIAL_CURRENCY;
  const meta =
    `,"key":${JSON.stringify(reference.key)},"title":${JSON.stringify(reference.title)},"unit":${JSON.stringify(toman ? tomanLabel(reference.unit) : reference.unit)}` +
    `,"currency":${JSON.stringify(toman ? TOMAN_CURRENCY : reference.currency)},"per":${JSON.stringify(reference.per)}` +
    `,"interval":"${head.interval}","from":"${time.format(head.from)}","to":"${time.format(head.to)}","count":${candles.count},"candles":[`;
  return { body: `${okHead(generatedAt)}${meta}${candles.json}]}`, etag: etagOf('h', combineHash(fnv1a(meta), candles.hash)) };
}
