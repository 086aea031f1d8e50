import Big from 'big.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { isCalendarDate, ZoneTime } from '../../domain/time.js';
import { NO_TIME, OtherItems, settle, type PendingItem } from '../settle.js';
import { SourceFormatError, type SourceData, type TimeRules } from '../source-data.js';
import { WholeDocumentParser } from './document-parser.js';
import type { EcbItem, EcbSpec } from './spec.js';

/**
 * The instant an ECB reference date stands for: 16:00 in Frankfurt (CET in
 * winter, CEST in summer), when the ECB publishes that day's rates. A file
 * dated today is so never "from the future" once it can be had, and ages
 * from the moment its rates were known.
 */
export const ECB_PUBLISH_HOUR = 16;
const FRANKFURT = new ZoneTime('Europe/Berlin');

/** Decimals a cross rate is rounded to, half to even. */
export const CROSS_DECIMALS = 6;
/** big.js with the cross rate's rounding: division rounds to 6 places, half to even, on the exact quotient. */
const Cross = Big();
Cross.DP = CROSS_DECIMALS;
Cross.RM = Big.roundHalfEven;

const RATE = /^\d+(?:\.\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  // Rates stay text: "1.0823" is read as written, never through a float.
  parseAttributeValue: false,
  parseTagValue: false,
  // Entities are never expanded: the ECB's file has none, and a hostile one cannot grow on the way in.
  processEntities: false,
  isArray: (name) => name === 'Cube',
});

interface Cube {
  '@time'?: unknown;
  '@currency'?: unknown;
  '@rate'?: unknown;
  Cube?: Cube[];
}

/**
 * `format: "ecb"`: the European Central Bank's euro foreign exchange
 * reference rates, in the shape of its public eurofxref-daily.xml:
 * `gesmes:Envelope > Cube > Cube[time] > Cube[currency, rate]`, each rate
 * the units of a currency one euro buys. An item `"USD"` is that rate as
 * written (US dollars per euro); a cross `"JPY/USD"` is JPY's rate divided
 * by USD's (yen per US dollar), exact, then rounded half to even to 6
 * decimals; `EUR` stands for 1 on either side of a cross. A file of several
 * days (eurofxref-hist-90d.xml) is read at its newest day. A currency not in
 * the file drops its items (`no_currency`).
 */
export class EcbParser extends WholeDocumentParser {

  constructor(private readonly spec: EcbSpec) {
    super();
  }

  finish(rules: TimeRules): SourceData {
    const text = this.wholeText();
    const valid = XMLValidator.validate(text);
    // The validator's message may quote the document; only where it broke is kept.
    if (valid !== true) throw new SourceFormatError(`invalid XML (line ${valid.err.line})`);
    const day = newestDay(xml.parse(text) as Record<string, unknown>);
    const rates = new Map<string, string | null>();
    for (const cube of day.Cube ?? []) {
      if (typeof cube['@currency'] !== 'string') continue;
      const rate = cube['@rate'];
      rates.set(cube['@currency'].trim(), typeof rate === 'string' && RATE.test(rate.trim()) ? rate.trim() : null);
    }
    const pending = new Map<string, PendingItem>();
    for (const item of this.spec.items) pending.set(item.sourceKey, readItem(item, rates));
    return settle(day.time, pending, new OtherItems(), rules);
  }
}

/** The newest `Cube[time]` of the envelope, with the instant its date stands for. */
function newestDay(document: Record<string, unknown>): Cube & { time: number } {
  const envelope = document.Envelope as { Cube?: Cube[] } | undefined;
  if (typeof envelope !== 'object' || envelope === null) throw new SourceFormatError('not an ECB reference rate document (no gesmes:Envelope)');
  const days = (envelope.Cube ?? []).flatMap((outer) => outer.Cube ?? []).filter((cube) => cube['@time'] !== undefined);
  if (days.length === 0) throw new SourceFormatError('no Cube with a time in the document');
  let newest: (Cube & { time: number }) | null = null;
  for (const cube of days) {
    const time = publishedAt(cube['@time']);
    if (time === null) throw new SourceFormatError('a Cube time is not a date (YYYY-MM-DD)');
    if (newest === null || time > newest.time) newest = { ...cube, time };
  }
  return newest!;
}

/** 16:00 in Frankfurt on the date (see ECB_PUBLISH_HOUR); null when it is no date. */
export function publishedAt(value: unknown): number | null {
  const match = typeof value === 'string' ? DATE.exec(value.trim()) : null;
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return isCalendarDate(year, month, day) ? FRANKFURT.localToEpoch(year, month, day, ECB_PUBLISH_HOUR) : null;
}

function readItem(item: EcbItem, rates: ReadonlyMap<string, string | null>): PendingItem {
  const rate = (currency: string) => (currency === 'EUR' ? '1' : rates.get(currency));
  const [top, bottom] = [rate(item.currency), item.per === null ? '1' : rate(item.per)];
  if (top === undefined || bottom === undefined) return 'no_currency';
  if (top === null || bottom === null) return 'not_a_number';
  if (isZero(top) || isZero(bottom)) return 'not_positive';
  const raw = item.per === null ? top : crossRate(top, bottom);
  const value = Number(raw);
  return value > 0 ? { raw, value, updatedAt: NO_TIME } : 'not_positive';
}

function isZero(rate: string): boolean {
  return /^0+(\.0+)?$/.test(rate);
}

/** `top ÷ bottom`, rounded half to even to 6 decimals on the exact quotient (big.js knows whether digits remain past the 6th). */
export function crossRate(top: string, bottom: string): string {
  return new Cross(top).div(bottom).toFixed();
}
