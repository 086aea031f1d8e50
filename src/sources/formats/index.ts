import { SourceDocumentParser } from '../parse.js';
import { CsvParser } from './csv.js';
import type { DocumentParser } from './document-parser.js';
import { EcbParser } from './ecb.js';
import { MappingParser } from './mapping.js';
import { ACCEPT, NERKH_FORMAT, type FormatName, type FormatSpec } from './spec.js';

export type { DocumentParser } from './document-parser.js';
export { FORMAT_NAMES, NERKH_FORMAT, type FormatName, type FormatSpec } from './spec.js';

/**
 * A parser for one document in the source's format. Each format is a module
 * of its own that turns text into the same SourceData (items, drops with
 * their reasons, unknown keys), so a new one plugs in here and nowhere else.
 * `wanted` (the catalogue's source keys) matters to the formats whose
 * document names its items (nerkh, csv); the others read only the keys
 * their config names.
 */
export function createDocumentParser(spec: FormatSpec = NERKH_FORMAT, wanted: ReadonlySet<string> | null = null): DocumentParser {
  switch (spec.kind) {
    case 'nerkh':
      return new SourceDocumentParser(wanted);
    case 'mapping':
      return new MappingParser(spec);
    case 'ecb':
      return new EcbParser(spec);
    case 'csv':
      return new CsvParser(spec, wanted);
  }
}

/** The `Accept` header an http source sends for its format. */
export function acceptFor(spec: FormatSpec = NERKH_FORMAT): string {
  return ACCEPT[spec.kind satisfies FormatName];
}
