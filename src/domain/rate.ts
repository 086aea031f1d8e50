import type { PerUnit } from './reference.js';

export type RateStatus = 'ok' | 'stale' | 'unavailable';

/** A value as one source gave it: the JSON number text exactly, and its numeric reading for checks. */
export interface SourceValue {
  raw: string;
  value: number;
  /** Epoch milliseconds. */
  updatedAt: number;
  /**
   * When the value stops being fresh whatever its source's max age (epoch ms):
   * a manual price's expiry, a derived value's first stale input. Absent: only
   * the max age decides.
   */
  expiresAt?: number;
}

/** What failover decides for one reference: the value served now and where it came from. */
export interface ResolvedRate {
  key: string;
  title: string;
  /** JSON number text exactly as the source gave it; null when unavailable. */
  value: string | null;
  unit: string;
  /** ISO 4217 code of the price (IRT for a toman rendering, XXX for an index). */
  currency: string;
  per: PerUnit;
  source_key: string;
  /** Epoch milliseconds of the value's own update time; null when unavailable. */
  updated_at: number | null;
  status: RateStatus;
  /** Name of the source that supplied the value. */
  source: string | null;
  /** Age of a stale value in whole seconds. */
  stale_seconds?: number;
}

/** What serialising a rate needs of the clock: zoned timestamps and Jalali dates (ZoneTime fits). */
export interface RateTime {
  format(ms: number): string;
  jalaliDate(ms: number): string;
  jalaliDateTime(ms: number): string;
}

/**
 * The market day of a rate (docs/api.md#detail), in the configured zone's calendar
 * day: JSON number text, exact; null when not known. `change_percent` has two
 * decimals.
 */
export interface DayFields {
  day_open: string | null;
  day_high: string | null;
  day_low: string | null;
  prev_close: string | null;
  change: string | null;
  change_percent: string | null;
}

export const NO_DAY_FIELDS: DayFields = Object.freeze({ day_open: null, day_high: null, day_low: null, prev_close: null, change: null, change_percent: null });

/** The candle length a value read from history (`?at=`) came from: a minute's close, an hour's or a day's. */
export type HistoryGrain = '1m' | '1h' | '1d';

/**
 * The market a rate trades in, as it stands (docs/api.md#market): open or
 * closed, why (in English and Persian) and when it opens. One object per
 * market and state, shared by every rate of that market in a snapshot.
 */
export interface MarketField {
  readonly name: string;
  readonly state: 'open' | 'closed';
  readonly reason: string | null;
  readonly reason_fa: string | null;
  /** Epoch ms; null while open. */
  readonly opens_at: number | null;
}

/** One entry of the detail response, before serialisation; `historical` when read from history (`?at=`). */
export interface Rate extends Omit<ResolvedRate, 'status'>, DayFields {
  status: RateStatus | 'historical';
  /** Only on rates read from history: the grain of the candle whose close is the value; null when there was none. */
  grain?: HistoryGrain | null;
  /** The rate's market; absent (served as null) for a reference no market takes. */
  market?: MarketField;
}

/** Each market field's JSON, made once per field object (a snapshot shares one per market and state). */
const marketJson = new WeakMap<MarketField, string>();

/** `,"market":{…}` for a rate: the same text for every rate of a market in a snapshot. */
export function serialiseMarket(market: MarketField | undefined, time: RateTime): string {
  if (market === undefined) return ',"market":null';
  let json = marketJson.get(market);
  if (json === undefined) {
    json =
      `,"market":{"name":${JSON.stringify(market.name)},"state":"${market.state}"` +
      `,"reason":${market.reason === null ? 'null' : JSON.stringify(market.reason)},"reason_fa":${market.reason_fa === null ? 'null' : JSON.stringify(market.reason_fa)}` +
      `,"opens_at":${market.opens_at === null ? 'null' : Number.isFinite(market.opens_at) ? JSON.stringify(time.format(market.opens_at)) : 'null'}}`;
    marketJson.set(market, json);
  }
  return json;
}

const number = (text: string | null) => text ?? 'null';

/**
 * Serialise a rate once; the request path only concatenates these strings.
 * `value` and the day fields are written as number text, so `300.5` stays `300.5`.
 */
export function serialiseRate(rate: Rate, time: RateTime): string {
  const at = rate.updated_at;
  let json =
    `{"key":${JSON.stringify(rate.key)},"title":${JSON.stringify(rate.title)},"value":${number(rate.value)}` +
    `,"unit":${JSON.stringify(rate.unit)},"currency":${JSON.stringify(rate.currency)},"per":${JSON.stringify(rate.per)}` +
    `,"source_key":${JSON.stringify(rate.source_key)}` +
    `,"updated_at":${at === null ? 'null' : JSON.stringify(time.format(at))}` +
    `,"updated_at_jalali":${at === null ? 'null' : JSON.stringify(time.jalaliDateTime(at))}` +
    `,"status":"${rate.status}","source":${rate.source === null ? 'null' : JSON.stringify(rate.source)}`;
  if (rate.stale_seconds !== undefined) json += `,"stale_seconds":${rate.stale_seconds}`;
  if (rate.grain !== undefined) json += `,"grain":${rate.grain === null ? 'null' : `"${rate.grain}"`}`;
  return (
    json +
    `,"day_open":${number(rate.day_open)},"day_high":${number(rate.day_high)},"day_low":${number(rate.day_low)}` +
    `,"prev_close":${number(rate.prev_close)},"change":${number(rate.change)},"change_percent":${number(rate.change_percent)}` +
    serialiseMarket(rate.market, time) +
    '}'
  );
}

/**
 * The webservice endpoint's entry for a rate, with the Jalali date of its update. Old
 * boards read a fixed shape, so `stale_seconds` is always there (null while fresh).
 */
export function serialiseWebserviceEntry(rate: Rate, time: RateTime): string {
  const at = rate.updated_at;
  return (
    `{"title":${JSON.stringify(rate.title)},"value":${number(rate.value)},"unit":${JSON.stringify(rate.unit)}` +
    `,"currency":${JSON.stringify(rate.currency)},"per":${JSON.stringify(rate.per)}` +
    `,"updated_at":${at === null ? 'null' : JSON.stringify(time.format(at))},"date_jalali":${at === null ? 'null' : JSON.stringify(time.jalaliDate(at))}` +
    `,"change":${number(rate.change)},"change_percent":${number(rate.change_percent)},"status":"${rate.status}","stale_seconds":${rate.stale_seconds ?? 'null'}` +
    serialiseMarket(rate.market, time) +
    '}'
  );
}
