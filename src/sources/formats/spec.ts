import type { JSONPathQuery } from 'json-p3';
import type { ZoneTime } from '../../domain/time.js';

/** The document shapes a file or http source may be read in (docs/configuration.md#formats). */
export const FORMAT_NAMES = ['nerkh', 'mapping', 'ecb', 'csv'] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** `nerkh`: the service's own shape, `{updated_at, items: {source_key: value | {value, updated_at}}}`, read as a stream. */
export interface NerkhSpec {
  kind: 'nerkh';
}

/** One `items` entry of a mapping source, compiled at start. */
export interface MappingItem {
  sourceKey: string;
  /** The JSONPath as written (for messages), and compiled. */
  pathText: string;
  path: JSONPathQuery;
  /** The item's own time path as written, and compiled; null: the item takes the document's time. */
  timePathText: string | null;
  timePath: JSONPathQuery | null;
  /** Decimal text the value is multiplied by, exactly; null: as written. */
  scale: string | null;
}

/** `mapping`: any JSON document, each catalogue source key read from where a JSONPath points. */
export interface MappingSpec {
  kind: 'mapping';
  items: readonly MappingItem[];
  /** The document's time path as written, and compiled. */
  updatedAtPathText: string | null;
  updatedAtPath: JSONPathQuery | null;
  /** The configured zone: a time written without one is a wall-clock time there. */
  zone: ZoneTime;
}

/** One `items` entry of an ecb source: a currency per euro, or the cross of two. */
export interface EcbItem {
  sourceKey: string;
  /** `USD` in `"USD"` and in `"USD/JPY"`. */
  currency: string;
  /** `JPY` in `"USD/JPY"`; null for a rate per euro. */
  per: string | null;
}

/** `ecb`: the European Central Bank's euro reference rates (eurofxref-daily.xml). */
export interface EcbSpec {
  kind: 'ecb';
  items: readonly EcbItem[];
}

/** `csv`: `source_key,value[,updated_at]` rows. */
export interface CsvSpec {
  kind: 'csv';
  zone: ZoneTime;
}

export type FormatSpec = NerkhSpec | MappingSpec | EcbSpec | CsvSpec;

export const NERKH_FORMAT: NerkhSpec = Object.freeze({ kind: 'nerkh' });

/** What an http source asks its upstream for, by format. */
export const ACCEPT: Record<FormatName, string> = {
  nerkh: 'application/json',
  mapping: 'application/json',
  ecb: 'application/xml, text/xml;q=0.9',
  csv: 'text/csv, text/plain;q=0.9',
};
