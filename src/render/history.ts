import { combineHash, etagOf, fnv1a } from '../domain/hash.js';
import type { Reference } from '../domain/reference.js';
import type { ZoneTime } from '../domain/time.js';
import type { Interval } from '../history/buckets.js';
import type { RenderedCandles } from '../history/reader.js';

const HEAD = '{"success":true,"status":"ok","generated_at":"';

/** What a history body says besides its candles. */
export interface HistoryBodyHead {
  reference: Reference;
  interval: Interval;
  from: number;
  to: number;
}

/**
 * The body of `GET /v1/rates/{key}/history`. The candles come rendered (their
 * values are the served number text, never a JS number); `t_jalali` is the
 * candle start in the Solar Hijri calendar, `1405/08/30 14:00:00`.
 */
export function renderHistory(head: HistoryBodyHead, candles: RenderedCandles, time: ZoneTime, generatedAt: string): { body: string; etag: string } {
  const { reference } = head;
  // `currency` and `per` come with the catalogue that carries them (PRODUCT §7); null until then.
  const units = reference as Partial<{ currency: string; per: string }>;
  const meta =
    `,"key":${JSON.stringify(reference.key)},"title":${JSON.stringify(reference.title)},"unit":${JSON.stringify(reference.unit)}` +
    `,"currency":${JSON.stringify(units.currency ?? null)},"per":${JSON.stringify(units.per ?? null)}` +
    `,"interval":"${head.interval}","from":"${time.format(head.from)}","to":"${time.format(head.to)}","count":${candles.count},"candles":[`;
  return { body: `${HEAD}${generatedAt}"${meta}${candles.json}]}`, etag: etagOf('h', combineHash(fnv1a(meta), candles.hash)) };
}
