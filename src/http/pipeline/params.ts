import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { compareDecimal, normalDecimal } from '../../domain/decimal.js';
import { ApiError } from '../../domain/errors.js';
import { StringEnum } from '../schemas.js';

/**
 * One query parameter, said once: the endpoint's parser and its OpenAPI
 * schema are both made from it, so what is documented is what is checked.
 */
export type ParamSpec =
  /** `pattern`: what the value must match (the document shows its source); `required`: absent is a named 400. */
  | { type: 'string'; minLength?: number; maxLength?: number; pattern?: RegExp; required?: true; description?: string; examples?: readonly string[] }
  /** `default` is documented; `fallback` is the value when absent without being written into the document. */
  | { type: 'enum'; values: readonly string[]; default?: string; fallback?: string; description?: string }
  /** `true` or `false`. */
  | { type: 'boolean'; description?: string }
  | { type: 'integer'; minimum: number; maximum: number; default?: number; description?: string }
  /**
   * A non-negative decimal as plain text (no sign, no exponent), kept as text
   * so its digits stay exact: at most `fractionDigits` decimals, at most
   * `maximum` (whose integer part bounds the digits), above zero when
   * `positive`. Its value is the normal form (`007.50` → `7.5`).
   */
  | { type: 'decimal'; maximum: string; fractionDigits: number; positive?: true; default?: string; required?: true; description?: string; examples?: readonly string[] };

export type ParamSpecs = Readonly<Record<string, ParamSpec>>;

type ValueOf<S extends ParamSpec> = S extends { type: 'enum'; values: readonly (infer V)[] }
  ? S extends { default: string } | { fallback: string }
    ? V
    : V | undefined
  : S extends { type: 'boolean' }
    ? boolean | undefined
    : S extends { type: 'integer' }
      ? S extends { default: number }
        ? number
        : number | undefined
      : S extends { default: string } | { required: true }
        ? string
        : string | undefined;

/** What a parser gives: each parameter's value, or its default (undefined when it has none). */
export type Values<S extends ParamSpecs> = { readonly [K in keyof S]: ValueOf<S[K]> };

/** An endpoint's query: the parser and the schema made from one table of specs. */
export interface QueryParams<S extends ParamSpecs> {
  /** The names as documented, in order (the unknown-parameter error lists them). */
  readonly names: readonly string[];
  /** The querystring schema for the API document: each parameter optional, no other allowed. */
  readonly schema: TObject;
  /** The values of a request with no query: one frozen object, so a plain request allocates nothing. */
  readonly none: Values<S>;
  /** Read a raw query string (after `?`): each name known and given once, each value valid. Throws ApiError INVALID_PARAMETER. */
  parse(query: string | null): Values<S>;
}

/**
 * `specs` are parsed; `answeredApart` are documented and named in errors only,
 * as the endpoint hands a request that has one to another answer before
 * parsing (detail's `?at=`).
 */
export function queryParams<const S extends ParamSpecs>(specs: S, answeredApart: ParamSpecs = {}): QueryParams<S> {
  const documented: ParamSpecs = { ...specs, ...answeredApart };
  const names = Object.keys(documented);
  const parsed = Object.keys(specs);
  const none: Record<string, unknown> = {};
  for (const name of parsed) none[name] = absent(specs[name]!);
  Object.freeze(none);
  const required = parsed.filter((name) => isRequired(specs[name]!));
  const schema = Type.Object(
    Object.fromEntries(names.map((name) => [name, isRequired(documented[name]!) ? schemaOf(documented[name]!) : Type.Optional(schemaOf(documented[name]!))])),
    { additionalProperties: false },
  );
  return {
    names,
    schema,
    none: none as Values<S>,
    parse(query) {
      if (query === null || query === '') {
        if (required.length > 0) throw missingParameter(required[0]!);
        return none as Values<S>;
      }
      const values: Record<string, unknown> = { ...none };
      const seen: string[] = [];
      for (const [name, text] of queryPairs(query)) {
        const spec = specs[name];
        if (spec === undefined || !Object.hasOwn(specs, name)) throw unknownParameter(name, names);
        if (seen.includes(name)) throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is given more than once.`);
        seen.push(name);
        values[name] = valueOf(name, spec, text);
      }
      for (const name of required) if (!seen.includes(name)) throw missingParameter(name);
      return (seen.length === 0 ? none : values) as Values<S>;
    },
  };
}

/** The TypeBox schema of one parameter, as the API document shows it. */
function schemaOf(spec: ParamSpec): TSchema {
  switch (spec.type) {
    case 'string':
      return Type.String(defined({ minLength: spec.minLength, maxLength: spec.maxLength, pattern: spec.pattern?.source, description: spec.description, examples: spec.examples }));
    case 'enum':
      return StringEnum(spec.values, defined({ default: spec.default, description: spec.description }));
    case 'boolean':
      return StringEnum(['true', 'false'], defined({ description: spec.description }));
    case 'integer':
      return Type.Integer(defined({ minimum: spec.minimum, maximum: spec.maximum, default: spec.default, description: spec.description }));
    case 'decimal':
      return Type.String(defined({ pattern: decimalPattern(spec).source, default: spec.default, description: spec.description, examples: spec.examples }));
  }
}

function isRequired(spec: ParamSpec): boolean {
  return (spec.type === 'string' || spec.type === 'decimal') && spec.required === true;
}

/** Plain digits, as many before the point as `maximum` has, at most `fractionDigits` after it. */
function decimalPattern(spec: Extract<ParamSpec, { type: 'decimal' }>): RegExp {
  const whole = spec.maximum.split('.')[0]!.length;
  return new RegExp(spec.fractionDigits === 0 ? `^\\d{1,${whole}}$` : `^\\d{1,${whole}}(?:\\.\\d{1,${spec.fractionDigits}})?$`);
}

/** A required parameter left out. */
function missingParameter(name: string): ApiError {
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is required.`);
}

function absent(spec: ParamSpec): unknown {
  if (spec.type === 'enum') return spec.default ?? spec.fallback;
  if (spec.type === 'integer') return spec.default;
  if (spec.type === 'decimal') return spec.default;
  return undefined;
}

function valueOf(name: string, spec: ParamSpec, text: string): unknown {
  switch (spec.type) {
    case 'string': {
      const min = spec.minLength ?? 0;
      const max = spec.maxLength ?? Infinity;
      if (text.length < min || text.length > max) {
        const range = max === Infinity ? `at least ${min}` : min === 0 ? `at most ${max}` : `${min} to ${max}`;
        throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be ${range} characters long.`);
      }
      if (spec.pattern && !spec.pattern.test(text)) throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must match ${spec.pattern.source}.`);
      return text;
    }
    case 'enum':
      if (!spec.values.includes(text)) throw notOneOf(name, spec.values);
      return text;
    case 'boolean':
      if (text !== 'true' && text !== 'false') throw notOneOf(name, ['true', 'false']);
      return text === 'true';
    case 'integer': {
      const value = /^-?\d{1,15}$/.test(text) ? Number(text) : NaN;
      if (!(value >= spec.minimum && value <= spec.maximum)) {
        throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be a whole number from ${spec.minimum} to ${spec.maximum}.`);
      }
      return value;
    }
    case 'decimal': {
      const lowest = spec.positive ? 'above 0' : 'from 0';
      const shape = `a plain decimal number ${lowest} to ${spec.maximum} with at most ${spec.fractionDigits} decimals`;
      if (!decimalPattern(spec).test(text)) throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be ${shape}.`);
      const value = normalDecimal(text);
      if (compareDecimal(value, spec.maximum) > 0 || (spec.positive && value === '0')) throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be ${shape}.`);
      return value;
    }
  }
}

/** The options given, in the order given, without the absent ones (the document stays as written by hand before). */
function defined<T extends Record<string, unknown>>(options: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const name in options) if (options[name] !== undefined) out[name] = name === 'examples' ? [...(options[name] as unknown[])] : options[name];
  return out as Partial<T>;
}

/** A query parameter the endpoint does not take: named, so a typo never passes silently (docs/api.md#conventions). */
export function unknownParameter(name: string, accepted: readonly string[]): ApiError {
  const takes = accepted.length === 0 ? 'this endpoint takes none' : `this endpoint takes ${accepted.join(', ')}`;
  return new ApiError('INVALID_PARAMETER', `Unknown query parameter ${JSON.stringify(name.slice(0, 64))}; ${takes}.`);
}

/** A parameter whose value is not one of a fixed set: the error lists the set. */
export function notOneOf(name: string, allowed: readonly unknown[]): ApiError {
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} must be one of: ${allowed.join(', ')}.`);
}

/**
 * The name, value pairs of a raw query string, as URLSearchParams reads them.
 * A plain query (no `%` or `+`, what clients send) is split by hand: the
 * compatibility routes carry their key and items in the query on every
 * request, and URLSearchParams costs several times as much.
 */
export function queryPairs(query: string): Iterable<[string, string]> {
  // URLSearchParams also drops a leading `?` (an address with `??`).
  if (query.indexOf('%') !== -1 || query.indexOf('+') !== -1 || query.charCodeAt(0) === 63) return new URLSearchParams(query);
  const pairs: [string, string][] = [];
  let from = 0;
  while (from <= query.length) {
    let end = query.indexOf('&', from);
    if (end === -1) end = query.length;
    if (end > from) {
      const equals = query.indexOf('=', from);
      pairs.push(equals !== -1 && equals < end ? [query.slice(from, equals), query.slice(equals + 1, end)] : [query.slice(from, end), '']);
    }
    from = end + 1;
  }
  return pairs;
}

/** The value of the first `name` in a raw query string, as URLSearchParams would read it; undefined without one. */
export function queryValue(query: string, name: string): string | undefined {
  for (const [given, value] of queryPairs(query)) if (given === name) return value;
  return undefined;
}

/**
 * Whether a raw query string names `name` (as URLSearchParams would read it),
 * without building anything for a plain one: only a query with `%` or `+` in
 * it is decoded.
 */
export function queryNames(query: string, name: string): boolean {
  if (query.indexOf('%') !== -1 || query.indexOf('+') !== -1) return new URLSearchParams(query).has(name);
  let from = 0;
  while (from <= query.length) {
    let end = query.indexOf('&', from);
    if (end === -1) end = query.length;
    const equals = query.indexOf('=', from);
    const nameEnd = equals !== -1 && equals < end ? equals : end;
    if (nameEnd - from === name.length && query.startsWith(name, from)) return true;
    from = end + 1;
  }
  return false;
}

/** One path parameter (every keyed route has at most one): its schema's text, and the error for a segment that cannot be read. */
export interface PathParamSpec {
  name: string;
  description: string;
  examples?: readonly string[];
  /** What the decoded segment must match; the document shows it as the schema's pattern. */
  pattern?: RegExp;
  /** Answered when the segment is not validly percent-encoded or misses the pattern (after admission). */
  invalid: ApiError;
}

export function pathParamSchema(spec: PathParamSpec): TObject {
  return Type.Object({ [spec.name]: Type.String(defined({ pattern: spec.pattern?.source, description: spec.description, examples: spec.examples })) });
}
