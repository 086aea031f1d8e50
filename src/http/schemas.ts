import { Kind, Type, TypeRegistry, type SchemaOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { PER_UNITS } from '../domain/reference.js';
import { CURRENCIES } from '../domain/currency.js';
import { ERROR_STATUS } from '../domain/errors.js';
import { DROP_REASONS } from '../sources/drops.js';

/** The schemas the API's endpoints share, and the parts their own schemas are made of; /openapi.json is generated from them. */

/**
 * A string from a fixed list as a plain JSON Schema `enum`: the OpenAPI
 * document shows one enum (not a union of constants), Fastify's validator
 * names the allowed values in its error, and TypeBox's own `Value.Check`
 * knows the kind through the registry (TypeBox's documented way to add one).
 */
/** A string from a fixed set; its validation error lists the set (see params.ts). */
export function StringEnum<T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, [Kind]: STRING_ENUM, type: 'string', enum: [...values] });
}
const STRING_ENUM = 'StringEnum';
if (!TypeRegistry.Has(STRING_ENUM)) TypeRegistry.Set<{ enum: string[] }>(STRING_ENUM, (schema, value) => typeof value === 'string' && schema.enum.includes(value));

export const Timestamp = Type.String({ description: 'ISO 8601 with a numeric UTC offset in the configured zone', examples: ['2026-11-21T14:03:07+03:30'] });
export const State = Type.Union([Type.Literal('active'), Type.Literal('degraded'), Type.Literal('down')]);
export const Ok = { success: Type.Literal(true), status: Type.Literal('ok'), generated_at: Timestamp };

/** A market-day number: exact, null when not known (or for a historical value). */
export function DayNumber(description: string) {
  return Type.Union([Type.Number(), Type.Null()], { description: `${description}; null when not known` });
}

export const ErrorSchema = Type.Object(
  {
    success: Type.Literal(false),
    status: Type.Literal('error'),
    generated_at: Timestamp,
    error: Type.Union(Object.keys(ERROR_STATUS).map((code) => Type.Literal(code))),
    message: Type.String(),
    request_id: Type.String(),
  },
  { $id: 'Error', additionalProperties: false },
);

export const Per = StringEnum(PER_UNITS, {
  description: 'What one price buys: a measure, a coin, one unit (or 10, 100, 1000, 1000000 units) of the named currency or token, or an index point',
});
export const CurrencySchema = StringEnum(CURRENCIES, {
  $id: 'Currency',
  description:
    'The currency of a price: an ISO 4217 code (IRR, USD, EUR…; XXX for an index, which has none), or IRT (the toman, not ISO 4217) for a rial price shown with ?unit=toman',
  examples: ['IRR'],
});
export const Currency = () => Type.Ref(CurrencySchema);

const DerivedInputSchema = Type.Object(
  {
    key: Type.String({ description: 'The reference the formula reads' }),
    value: Type.Number({ description: 'Its value as served in the same snapshot (after failover and screening); a rial price in toman with ?unit=toman' }),
    currency: Currency(),
    updated_at: Timestamp,
    status: StringEnum(['ok', 'stale'], { description: 'Whether that value was fresh; a stale input makes the derived value stale' }),
    source: Type.String({ description: 'The source that value came from' }),
  },
  { additionalProperties: false },
);

const SourceViewSchema = Type.Object(
  {
    name: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()], { description: "The source's value (in the rate's unit); null when it has none for this reference" }),
    updated_at: Type.Union([Timestamp, Type.Null()]),
    state: StringEnum(['active', 'degraded', 'down'], { description: "The source's state, as on /v1/status" }),
    used: Type.Boolean({ description: 'Whether this value is the one served' }),
    rejected: Type.Union([StringEnum(['stale', 'out_of_range', 'outlier', 'unhealthy', 'held', 'dropped']), Type.Null()], {
      description:
        'Why the value was not served: stale (older than the source max age), out_of_range (outside the sanity band), outlier (too far from the median of three or more sources), unhealthy (the source failed its latest read), held (a jump beyond max_jump_percent awaiting confirmation), dropped (the source\'s document had the item but it did not read: see dropped_reason); null when served, or usable behind a source earlier in priority',
    }),
    dropped_reason: Type.Union([StringEnum(DROP_REASONS), Type.Null()], {
      description: 'With rejected `dropped`: why the item did not read (the codes of `dropped_reasons` on /v1/status); null otherwise',
    }),
    inputs: Type.Optional(
      Type.Array(DerivedInputSchema, {
        description: 'Only on the `derived` source of a reference computed by a formula (config `derived`): the values it was computed from; its updated_at is the oldest of theirs',
      }),
    ),
  },
  { additionalProperties: false },
);

export const MarketSchema = Type.Object(
  {
    name: Type.String({ description: 'The market the reference trades in (config `markets`): tehran, international, crypto by default' }),
    state: StringEnum(['open', 'closed']),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it is closed, in English ("Friday", "Nowruz", an operator\'s text); null while open', examples: ['Friday'] }),
    reason_fa: Type.Union([Type.String(), Type.Null()], { description: 'The same in Persian (ordinary letters); null while open', examples: ['جمعه'] }),
    opens_at: Type.Union([Timestamp, Type.Null()], { description: 'When it opens again, in the configured zone; null while open' }),
  },
  {
    $id: 'Market',
    additionalProperties: false,
    description: "The reference's market as it stands: while it is closed a value fresh at the close stays `ok` (its age counts only open time)",
  },
);

export const RateSchema = Type.Object(
  {
    key: Type.String(),
    title: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()], { description: 'The price exactly as the source gave it (in toman: divided by 10 exactly); null when unavailable' }),
    unit: Type.String({ description: 'Persian label saying currency and per in words, e.g. ریال/گرم (تومان/گرم with ?unit=toman)' }),
    currency: Currency(),
    per: Per,
    source_key: Type.String(),
    updated_at: Type.Union([Timestamp, Type.Null()]),
    updated_at_jalali: Type.Union([Type.String({ description: 'updated_at in the Solar Hijri calendar and the configured zone', examples: ['1405/09/01 22:33:17'] }), Type.Null()]),
    status: Type.Union([Type.Literal('ok'), Type.Literal('stale'), Type.Literal('unavailable'), Type.Literal('historical')], {
      description: '`historical` for a value read from history (`?at=`)',
    }),
    source: Type.Union([Type.String(), Type.Null()], { description: 'The source that supplied the value' }),
    stale_seconds: Type.Optional(Type.Integer({ description: 'Age of a stale value in seconds' })),
    grain: Type.Optional(
      Type.Union([StringEnum(['1m', '1h', '1d']), Type.Null()], {
        description: 'Only with `?at=`: the candle the value is the close of, a minute (1m), an hour (1h) or a day (1d); null when nothing had been served by then',
      }),
    ),
    day_open: DayNumber('The first value served today (calendar day in the configured zone)'),
    day_high: DayNumber('The highest value served today'),
    day_low: DayNumber('The lowest value served today'),
    prev_close: DayNumber('The last value served on the previous day'),
    change: DayNumber('value − prev_close, exactly'),
    change_percent: DayNumber('change ÷ prev_close × 100, two decimals'),
    market: Type.Union([Type.Ref(MarketSchema), Type.Null()], { description: 'Its market; null for a reference no market takes (always open)' }),
    sources: Type.Optional(
      Type.Array(SourceViewSchema, { description: "With ?expand=sources: every configured source's view of this reference, in priority order, as of the snapshot" }),
    ),
  },
  { $id: 'Rate', additionalProperties: false },
);

/** For endpoints that take no query parameter: any one given is an error that names it. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const HealthResponse = Type.Object({ ...Ok }, { $id: 'HealthResponse', additionalProperties: false });

/** Error responses an authenticated route may give. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref(ErrorSchema)]));
}

/**
 * The schemas more than one endpoint's answer refers to (and the probes'); an
 * endpoint's own are in its folder's schema.ts, listed by its module, and
 * registered after these (registry.ts, API_SCHEMAS).
 */
export const SHARED_SCHEMAS: TSchema[] = [CurrencySchema, ErrorSchema, MarketSchema, RateSchema, HealthResponse];

/** An exact decimal, written as a JSON number with the digits it has (never through a float). */
export const Exact = (description: string) => Type.Number({ description });

/** An exact decimal as a string in a peer's unit (navasan writes its values as strings). */
export const PeerDecimal = (description: string) => Type.String({ pattern: '^-?\\d+(?:\\.\\d+)?$', description });

