import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ISO_CURRENCIES } from '../domain/currency.js';
import { CATEGORIES, CURRENCY_PATTERN, KEY_PATTERN, PER_UNITS, type Category, type PerUnit, type Reference } from '../domain/reference.js';
import { Catalogue } from './catalogue.js';

export class CatalogueError extends Error {}

const FIELDS = ['key', 'title', 'title_en', 'description', 'unit', 'currency', 'per', 'category', 'source_key', 'aliases', 'status'] as const;
const POPULAR_FILE = 'popular.json';

/**
 * Load and validate the reference data: a folder of JSON arrays (one file a
 * category, plus `popular.json`, the popularity order) or a single file.
 * Every problem names its file and entry.
 */
export function loadCatalogue(path: string): Catalogue {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((name) => name.endsWith('.json') && name !== POPULAR_FILE)
        .sort()
        .map((name) => join(path, name))
    : [path];
  const references: Reference[] = [];
  const origin = new Map<string, string>(); // key or alias → "file entry" for messages
  const canonical = new Map<string, string>(); // key or alias → key
  const labels = new Map<string, { reference: Reference; where: string }>(); // unit label → its first user
  for (const file of files) {
    const entries = readJson(file);
    if (!Array.isArray(entries)) throw new CatalogueError(`${basename(file)}: expected a JSON array of references`);
    entries.forEach((entry, index) => {
      const where = `${basename(file)} entry ${index}${typeof entry?.key === 'string' ? ` (${entry.key})` : ''}`;
      const reference = validateEntry(entry, where);
      claim(origin, reference.key, where, 'key');
      for (const alias of reference.aliases) claim(origin, alias, where, 'alias');
      for (const name of [reference.key, ...reference.aliases]) canonical.set(name, reference.key);
      claimLabel(labels, reference, where);
      references.push(reference);
    });
  }
  if (references.length === 0) throw new CatalogueError('the catalogue holds no references');
  // Listings follow the category order of the product (gold first), then file order.
  references.sort((a, b) => CATEGORIES.indexOf(a.category) - CATEGORIES.indexOf(b.category));

  const popularPath = statSync(path).isDirectory() ? join(path, POPULAR_FILE) : null;
  const popular = popularPath && existsFile(popularPath) ? readPopular(popularPath, canonical) : [];
  return new Catalogue(references, popular);
}

function validateEntry(entry: unknown, where: string): Reference {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new CatalogueError(`${where}: not an object`);
  const record = entry as Record<string, unknown>;
  for (const field of FIELDS) {
    if (record[field] === undefined) throw new CatalogueError(`${where}: missing field "${field}"`);
  }
  for (const field of ['key', 'title', 'title_en', 'description', 'unit', 'source_key'] as const) {
    if (typeof record[field] !== 'string' || (record[field] as string).trim() === '') {
      throw new CatalogueError(`${where}: field "${field}" must be a non-empty string`);
    }
  }
  const key = record.key as string;
  if (!KEY_PATTERN.test(key) || key !== key.toLowerCase()) throw new CatalogueError(`${where}: key "${key}" must be lowercase and match ${KEY_PATTERN}`);
  if (typeof record.currency !== 'string' || !CURRENCY_PATTERN.test(record.currency) || !ISO_CURRENCIES.includes(record.currency)) {
    throw new CatalogueError(`${where}: currency ${JSON.stringify(record.currency)} must be an ISO 4217 code such as IRR or USD (XXX for an index)`);
  }
  if (!PER_UNITS.includes(record.per as PerUnit)) {
    throw new CatalogueError(`${where}: per ${JSON.stringify(record.per)} must be one of ${PER_UNITS.map((p) => `"${p}"`).join(', ')}`);
  }
  if (!CATEGORIES.includes(record.category as Category)) {
    throw new CatalogueError(`${where}: category must be one of ${CATEGORIES.join(', ')}`);
  }
  if (record.status !== 'active') throw new CatalogueError(`${where}: status must be "active"`);
  const min = bound(record, 'min', where);
  const max = bound(record, 'max', where);
  if (min !== null && max !== null && min >= max) throw new CatalogueError(`${where}: min (${min}) must be below max (${max})`);
  const aliases = record.aliases;
  if (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string')) throw new CatalogueError(`${where}: aliases must be an array of strings`);
  for (const alias of aliases as string[]) {
    if (!KEY_PATTERN.test(alias) || alias !== alias.toLowerCase()) throw new CatalogueError(`${where}: alias "${alias}" must be lowercase and match ${KEY_PATTERN}`);
  }
  return {
    key,
    title: record.title as string,
    title_en: record.title_en as string,
    description: record.description as string,
    unit: record.unit as string,
    currency: record.currency as string,
    per: record.per as PerUnit,
    min,
    max,
    category: record.category as Category,
    source_key: record.source_key as string,
    aliases: [...(aliases as string[])],
    status: 'active',
  };
}

/** An optional bound of the sanity band: absent (or null) is null, present is a positive finite number. */
function bound(record: Record<string, unknown>, field: 'min' | 'max', where: string): number | null {
  const value = record[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new CatalogueError(`${where}: ${field} must be a positive finite number when given`);
  }
  return value;
}

function claim(origin: Map<string, string>, name: string, where: string, kind: 'key' | 'alias'): void {
  const previous = origin.get(name);
  if (previous) throw new CatalogueError(`${where}: ${kind} "${name}" is already used by ${previous}`);
  origin.set(name, where);
}

/** One unit label means one thing: a reader who sees it must know the currency and what the price buys. */
function claimLabel(labels: Map<string, { reference: Reference; where: string }>, reference: Reference, where: string): void {
  const first = labels.get(reference.unit);
  if (!first) {
    labels.set(reference.unit, { reference, where });
    return;
  }
  if (first.reference.currency !== reference.currency || first.reference.per !== reference.per) {
    throw new CatalogueError(
      `${where}: unit "${reference.unit}" (${reference.currency} per ${reference.per}) already means ${first.reference.currency} per ${first.reference.per} in ${first.where}`,
    );
  }
}

/** The popularity order, as canonical keys; an alias stands for its reference. */
function readPopular(path: string, canonical: Map<string, string>): string[] {
  const list = readJson(path);
  if (!Array.isArray(list) || list.some((k) => typeof k !== 'string')) throw new CatalogueError(`${POPULAR_FILE}: expected an array of reference keys`);
  const keys: string[] = [];
  for (const name of list as string[]) {
    const key = canonical.get(name);
    if (!key) throw new CatalogueError(`${POPULAR_FILE}: "${name}" is not a reference key`);
    if (keys.includes(key)) throw new CatalogueError(`${POPULAR_FILE}: "${name}" is listed twice`);
    keys.push(key);
  }
  return keys;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CatalogueError(`${basename(file)}: ${(error as Error).message}`);
  }
}

function existsFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
