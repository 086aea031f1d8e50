import { ZoneTime } from '../../domain/time.js';
import { compileFormat, type FormatFields, type MappingItemField } from './compile.js';
import type { FormatSpec } from './spec.js';

/**
 * A format as plain data: its config fields and time zone. A compiled
 * format cannot cross to a parse thread (a compiled JSONPath and a zone's
 * formatters are objects with methods), so it crosses as this and is
 * compiled again there.
 */
export interface PortableFormat {
  fields: FormatFields;
  timeZone: string;
}

/** The fields `spec` was compiled from (already checked once, at start). */
export function portableFormat(spec: FormatSpec): PortableFormat {
  switch (spec.kind) {
    case 'nerkh':
      return { fields: { format: 'nerkh' }, timeZone: 'UTC' };
    case 'csv':
      return { fields: { format: 'csv' }, timeZone: spec.zone.timeZone };
    case 'ecb':
      return { fields: { format: 'ecb', items: Object.fromEntries(spec.items.map((item) => [item.sourceKey, item.per === null ? item.currency : `${item.currency}/${item.per}`])) }, timeZone: 'UTC' };
    case 'mapping': {
      const items = spec.items.map((item): [string, MappingItemField] => [item.sourceKey, { path: item.pathText, ...(item.timePathText === null ? {} : { time_path: item.timePathText }), ...(item.scale === null ? {} : { scale: item.scale }) }]);
      return { fields: { format: 'mapping', items: Object.fromEntries(items), ...(spec.updatedAtPathText === null ? {} : { updated_at_path: spec.updatedAtPathText }) }, timeZone: spec.zone.timeZone };
    }
  }
}

/** Compiled formats by their portable form: a thread parses for the same few sources again and again. */
const compiled = new Map<string, FormatSpec>();
/** Formats kept compiled at most (a config has a handful; a bound all the same). */
const MAX_COMPILED = 64;

/** The spec a portable format stands for, compiled once per thread. */
export function compilePortable(portable: PortableFormat): FormatSpec {
  const key = JSON.stringify(portable);
  let spec = compiled.get(key);
  if (spec === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    spec = compileFormat(portable.fields, new ZoneTime(portable.timeZone));
    compiled.set(key, spec);
  }
  return spec;
}
