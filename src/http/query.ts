import { ApiError } from '../domain/errors.js';
import { DEFAULT_RATE_UNIT, RATE_UNITS, type RateUnit } from '../domain/units.js';

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

/** The parameters of `GET /v1/rates/{keys}`. */
export const DETAIL_PARAMETERS = ['unit', 'expand'] as const;
/** What `?expand=` can add to each rate. */
export const EXPAND_VALUES = ['sources'] as const;

export interface DetailQuery {
  unit: RateUnit;
  /** `?expand=sources`: each rate lists every source's view of it. */
  sources: boolean;
}

export const PLAIN_DETAIL_QUERY: DetailQuery = { unit: DEFAULT_RATE_UNIT, sources: false };

/** The detail query string (after `?`), strictly: each parameter once, known values only. */
export function parseDetailQuery(query: string): DetailQuery {
  let unit: string | undefined;
  let expand: string | undefined;
  for (const [name, value] of new URLSearchParams(query)) {
    if (name === 'unit' || name === 'expand') {
      if ((name === 'unit' ? unit : expand) !== undefined) throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is given more than once.`);
      if (name === 'unit') unit = value;
      else expand = value;
    } else throw unknownParameter(name, DETAIL_PARAMETERS);
  }
  if (expand !== undefined && !(EXPAND_VALUES as readonly string[]).includes(expand)) throw notOneOf('expand', EXPAND_VALUES);
  return unit === undefined && expand === undefined ? PLAIN_DETAIL_QUERY : { unit: parseUnit(unit), sources: expand === 'sources' };
}
