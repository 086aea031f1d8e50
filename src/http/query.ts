import { ApiError } from '../domain/errors.js';
import { CATEGORIES, type Category } from '../domain/reference.js';
import { DEFAULT_RATE_UNIT, RATE_UNITS, type RateUnit } from '../domain/units.js';
import type { CatalogueFilter } from '../render/catalogue.js';

/** A query parameter the endpoint does not take: named, so a typo never passes silently (PRODUCT §7). */
export function unknownParameter(name: string, accepted: readonly string[]): ApiError {
  const takes = accepted.length === 0 ? 'this endpoint takes none' : `this endpoint takes ${accepted.join(', ')}`;
  return new ApiError('INVALID_PARAMETER', `Unknown query parameter ${JSON.stringify(name.slice(0, 64))}; ${takes}.`);
}

/** A parameter whose value is not one of a fixed set: the error lists the set. */
export function notOneOf(name: string, allowed: readonly unknown[]): ApiError {
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be one of: ${allowed.join(', ')}.`);
}

/** The unit of `?unit=` (PRODUCT §7), for any endpoint that shows prices; absent: rial. */
export function parseUnit(value: string | undefined): RateUnit {
  if (value === undefined) return DEFAULT_RATE_UNIT;
  if (!(RATE_UNITS as readonly string[]).includes(value)) throw notOneOf('unit', RATE_UNITS);
  return value as RateUnit;
}

/**
 * A raw query string (after `?`) read strictly, for endpoints that parse
 * their own query on both paths: every name must be one the endpoint takes,
 * and each at most once.
 */
export function readParameters(query: string, accepted: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(query)) {
    if (!accepted.includes(name)) throw unknownParameter(name, accepted);
    if (found.has(name)) throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is given more than once.`);
    found.set(name, value);
  }
  return found;
}

/** The parameters of `GET /v1/rates/{keys}`; `at` is answered apart, from history (historical.ts), and never reaches parseDetailQuery. */
export const DETAIL_PARAMETERS = ['unit', 'expand', 'at'] as const;
/** What `?expand=` can add to each rate. */
export const EXPAND_VALUES = ['sources'] as const;

export interface DetailQuery {
  unit: RateUnit;
  /** `?expand=sources`: each rate lists every source's view of it. */
  sources: boolean;
}

export const PLAIN_DETAIL_QUERY: DetailQuery = { unit: DEFAULT_RATE_UNIT, sources: false };

/** The detail query string: each parameter once, known values only. */
export function parseDetailQuery(query: string): DetailQuery {
  const parameters = readParameters(query, DETAIL_PARAMETERS);
  if (parameters.size === 0) return PLAIN_DETAIL_QUERY;
  const expand = parameters.get('expand');
  if (expand !== undefined && !(EXPAND_VALUES as readonly string[]).includes(expand)) throw notOneOf('expand', EXPAND_VALUES);
  return { unit: parseUnit(parameters.get('unit')), sources: expand === 'sources' };
}

/** The parameters of `GET /v1/rates`. */
export const CATALOGUE_PARAMETERS = ['category', 'q', 'in_plan'] as const;
export const MAX_SEARCH_LENGTH = 100;
const NO_FILTER: CatalogueFilter = {};

/** The catalogue query string: each parameter once, known values only, `q` 1 to 100 characters. */
export function parseCatalogueQuery(query: string): CatalogueFilter {
  const parameters = readParameters(query, CATALOGUE_PARAMETERS);
  if (parameters.size === 0) return NO_FILTER;
  const category = parameters.get('category');
  if (category !== undefined && !(CATEGORIES as readonly string[]).includes(category)) throw notOneOf('category', CATEGORIES);
  const q = parameters.get('q');
  if (q !== undefined && (q.length < 1 || q.length > MAX_SEARCH_LENGTH)) {
    throw new ApiError('INVALID_PARAMETER', `Query parameter "q" must be 1 to ${MAX_SEARCH_LENGTH} characters long.`);
  }
  const inPlan = parameters.get('in_plan');
  if (inPlan !== undefined && inPlan !== 'true' && inPlan !== 'false') throw notOneOf('in_plan', ['true', 'false']);
  return { category: category as Category | undefined, q, inPlan: inPlan === undefined ? undefined : inPlan === 'true' };
}
