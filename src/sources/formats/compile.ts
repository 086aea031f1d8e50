import { createRequire } from 'node:module';
import type { JSONPathQuery } from 'json-p3';
import type { ZoneTime } from '../../domain/time.js';
import { NERKH_FORMAT, type EcbItem, type FormatName, type FormatSpec, type MappingItem } from './spec.js';

/** json-p3, loaded only for a config with JSONPaths to compile: a start or an admin command without one never pays for it. */
const jsonPath = () => (createRequire(import.meta.url)('json-p3') as typeof import('json-p3')).jsonpath;

/** A mapping item as the config file writes it: a JSONPath, or a path with its own time and a scale. */
export type MappingItemField = string | { path: string; time_path?: string; scale?: string };

/** The fields of a source's config entry that say how its document is read. */
export interface FormatFields {
  format?: FormatName;
  items?: Record<string, MappingItemField>;
  updated_at_path?: string;
}

/** A format field that cannot be used; `field` is where it is, relative to the source (`items.ir_fx_free_usd.scale`). */
export class FormatConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const SCALE = /^\d+(?:\.\d+)?$/;
const CURRENCY = /^[A-Z]{3}$/;

/**
 * Check a source's format fields and compile them once, at start: every
 * JSONPath parsed, every scale a decimal above zero, every ECB item a
 * currency code or a cross. Any problem throws, naming the field. (That an
 * item's key is a catalogue source key is checked against the catalogue,
 * once it is loaded: see `formatSourceKeys`.)
 */
export function compileFormat(fields: FormatFields, zone: ZoneTime): FormatSpec {
  const format = fields.format ?? 'nerkh';
  if (format !== 'mapping' && fields.updated_at_path !== undefined) throw new FormatConfigError('updated_at_path', `only a "mapping" source has one (this source's format is "${format}")`);
  if (format === 'nerkh' || format === 'csv') {
    if (fields.items !== undefined) throw new FormatConfigError('items', `not allowed with format "${format}": its document names its items itself`);
    return format === 'nerkh' ? NERKH_FORMAT : { kind: 'csv', zone };
  }
  const entries = Object.entries(fields.items ?? {});
  if (entries.length === 0) throw new FormatConfigError('items', `required with format "${format}": which source key is read from where`);
  if (format === 'ecb') return { kind: 'ecb', items: entries.map(([sourceKey, item]) => ecbItem(sourceKey, item)) };
  return {
    kind: 'mapping',
    items: entries.map(([sourceKey, item]) => mappingItem(sourceKey, item)),
    updatedAtPathText: fields.updated_at_path ?? null,
    updatedAtPath: fields.updated_at_path === undefined ? null : compilePath(fields.updated_at_path, 'updated_at_path'),
    zone,
  };
}

/** The source keys a source's config names (`items`), so they can be checked against the catalogue. */
export function formatSourceKeys(fields: FormatFields): string[] {
  return Object.keys(fields.items ?? {});
}

function mappingItem(sourceKey: string, item: MappingItemField): MappingItem {
  const at = `items.${sourceKey}`;
  if (typeof item === 'string') return { sourceKey, pathText: item, path: compilePath(item, at), timePathText: null, timePath: null, scale: null };
  if (item.scale !== undefined && (!SCALE.test(item.scale) || /^0+(\.0+)?$/.test(item.scale))) {
    throw new FormatConfigError(`${at}.scale`, `${JSON.stringify(item.scale)} is not a decimal above zero (write it as text: "10" turns toman into rial)`);
  }
  return {
    sourceKey,
    pathText: item.path,
    path: compilePath(item.path, `${at}.path`),
    timePathText: item.time_path ?? null,
    timePath: item.time_path === undefined ? null : compilePath(item.time_path, `${at}.time_path`),
    scale: item.scale ?? null,
  };
}

function compilePath(text: string, field: string): JSONPathQuery {
  try {
    return jsonPath().compile(text);
  } catch (error) {
    throw new FormatConfigError(field, `invalid JSONPath ${JSON.stringify(text)}: ${(error as Error).message}`);
  }
}

function ecbItem(sourceKey: string, item: MappingItemField): EcbItem {
  const at = `items.${sourceKey}`;
  const expected = 'a currency code ("USD": US dollars per euro) or a cross ("JPY/USD": yen per US dollar)';
  if (typeof item !== 'string') throw new FormatConfigError(at, `expected ${expected}`);
  const [currency, per, ...rest] = item.split('/');
  if (rest.length > 0 || !CURRENCY.test(currency!) || (per !== undefined && !CURRENCY.test(per))) throw new FormatConfigError(at, `${JSON.stringify(item)} is not ${expected}`);
  if (per === currency) throw new FormatConfigError(at, `${JSON.stringify(item)} is a currency against itself`);
  return { sourceKey, currency: currency!, per: per ?? null };
}
