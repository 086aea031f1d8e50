import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { Reference } from '../domain/reference.js';
import { DIVISOR_PATTERN, PeerUnit } from './peer-unit.js';

/** Where the bundled mappings live: `data/compat/` of the package (from `src/compat/` or `dist/compat/` alike). */
export const COMPAT_DATA = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', 'compat');

export class PeerMapError extends Error {}

/** One navasan item: its name, the reference it shows, and the divisor from the catalogue's unit to navasan's. */
export interface NavasanEntry {
  item: string;
  reference: string;
  divisor: string;
}

export const BRSAPI_GROUPS = ['gold', 'currency', 'cryptocurrency'] as const;
export type BrsapiGroup = (typeof BRSAPI_GROUPS)[number];
export const BRSAPI_UNITS = ['تومان', 'دلار'] as const;

/** One BrsApi symbol: as navasan's, plus the group it is listed in and the names and unit BrsApi writes. */
export interface BrsapiEntry {
  symbol: string;
  reference: string;
  divisor: string;
  group: BrsapiGroup;
  name_en: string;
  name: string;
  unit: (typeof BRSAPI_UNITS)[number];
}

/** A mapping entry bound to the running catalogue: its reference, and the exact conversion to the peer's unit. */
export interface Mapped<E> {
  entry: E;
  name: string;
  reference: Reference;
  unit: PeerUnit;
}

/** A peer's mapping as served: entries by peer name (in file order), and those whose reference this catalogue lacks. */
export interface PeerMap<E> {
  entries: readonly Mapped<E>[];
  byName: ReadonlyMap<string, Mapped<E>>;
  /** Entries whose reference the running catalogue does not have (a custom catalogue): treated as unknown names. */
  missing: readonly E[];
}

const NAVASAN_ITEM = /^[a-z0-9_]{1,40}$/;
const BRSAPI_SYMBOL = /^[A-Z0-9_]{1,40}$/;

/** Read and check `data/compat/navasan.json` (or another file of its shape). */
export function readNavasanFile(path = join(COMPAT_DATA, 'navasan.json')): NavasanEntry[] {
  return itemsOf(path, 'navasan').map((raw, index) => {
    const where = `${path} item ${index}`;
    const entry = { item: text(raw, 'item', where), reference: text(raw, 'reference', where), divisor: text(raw, 'divisor', where) };
    if (!NAVASAN_ITEM.test(entry.item)) throw new PeerMapError(`${where}: "item" must match ${NAVASAN_ITEM.source}`);
    checkDivisor(entry.divisor, where);
    onlyFields(raw, ['item', 'reference', 'divisor'], where);
    return entry;
  });
}

/** Read and check `data/compat/brsapi.json` (or another file of its shape). */
export function readBrsapiFile(path = join(COMPAT_DATA, 'brsapi.json')): BrsapiEntry[] {
  return itemsOf(path, 'brsapi').map((raw, index) => {
    const where = `${path} item ${index}`;
    const group = text(raw, 'group', where);
    const unit = text(raw, 'unit', where);
    if (!(BRSAPI_GROUPS as readonly string[]).includes(group)) throw new PeerMapError(`${where}: "group" must be one of ${BRSAPI_GROUPS.join(', ')}`);
    if (!(BRSAPI_UNITS as readonly string[]).includes(unit)) throw new PeerMapError(`${where}: "unit" must be one of ${BRSAPI_UNITS.join(', ')}`);
    const entry: BrsapiEntry = {
      symbol: text(raw, 'symbol', where),
      reference: text(raw, 'reference', where),
      divisor: text(raw, 'divisor', where),
      group: group as BrsapiGroup,
      name_en: text(raw, 'name_en', where),
      name: text(raw, 'name', where),
      unit: unit as BrsapiEntry['unit'],
    };
    if (!BRSAPI_SYMBOL.test(entry.symbol)) throw new PeerMapError(`${where}: "symbol" must match ${BRSAPI_SYMBOL.source}`);
    checkDivisor(entry.divisor, where);
    onlyFields(raw, ['symbol', 'reference', 'divisor', 'group', 'name_en', 'name', 'unit'], where);
    return entry;
  });
}

/**
 * Bind entries to the running catalogue, by `nameOf` (each name once). A
 * reference may be named by its key or an alias; one the catalogue lacks is
 * set aside in `missing` (the bundled catalogue has every one: a test holds it).
 */
export function bindPeerMap<E extends { reference: string; divisor: string }>(entries: readonly E[], catalogue: Catalogue, nameOf: (entry: E) => string): PeerMap<E> {
  const byName = new Map<string, Mapped<E>>();
  const bound: Mapped<E>[] = [];
  const missing: E[] = [];
  for (const entry of entries) {
    const name = nameOf(entry);
    if (byName.has(name) || missing.some((other) => nameOf(other) === name)) throw new PeerMapError(`${name} is mapped twice`);
    const reference = catalogue.lookup(entry.reference);
    if (!reference) {
      missing.push(entry);
      continue;
    }
    const mapped = { entry, name, reference, unit: new PeerUnit(entry.divisor) };
    byName.set(name, mapped);
    bound.push(mapped);
  }
  return { entries: bound, byName, missing };
}

function itemsOf(path: string, peer: string): Record<string, unknown>[] {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new PeerMapError(`${path}: ${(error as Error).message}`);
  }
  const record = document as { peer?: unknown; items?: unknown };
  if (typeof document !== 'object' || document === null || record.peer !== peer || !Array.isArray(record.items)) {
    throw new PeerMapError(`${path}: expected {"peer": "${peer}", "items": [...]}`);
  }
  return record.items.map((item, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new PeerMapError(`${path} item ${index}: not an object`);
    return item as Record<string, unknown>;
  });
}

function text(raw: Record<string, unknown>, field: string, where: string): string {
  const value = raw[field];
  if (typeof value !== 'string' || value.trim() === '') throw new PeerMapError(`${where}: "${field}" must be a non-empty string`);
  return value;
}

function checkDivisor(divisor: string, where: string): void {
  if (!DIVISOR_PATTERN.test(divisor)) throw new PeerMapError(`${where}: "divisor" must be a power of ten written out ("1", "10", "10000")`);
}

function onlyFields(raw: Record<string, unknown>, fields: readonly string[], where: string): void {
  const extra = Object.keys(raw).find((field) => !fields.includes(field));
  if (extra !== undefined) throw new PeerMapError(`${where}: unknown field "${extra}"`);
}
