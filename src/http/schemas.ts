import { Type, type TSchema } from '@sinclair/typebox';
import { CATEGORIES, KEY_PATTERN, PER_UNITS, type Category } from '../domain/reference.js';
import { INTERVALS } from '../history/buckets.js';
import { ERROR_STATUS } from '../domain/errors.js';

/** Every schema of the API: routes validate requests with them and /openapi.json is generated from them. */

const Timestamp = Type.String({ description: 'ISO 8601 with a numeric UTC offset in the configured zone', examples: ['2026-11-21T14:03:07+03:30'] });
const State = Type.Union([Type.Literal('active'), Type.Literal('degraded'), Type.Literal('down')]);
const Ok = { success: Type.Literal(true), status: Type.Literal('ok'), generated_at: Timestamp };

/** A market-day number: exact, null when not known (or for a historical value). */
function DayNumber(description: string) {
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

export const ReferenceSchema = Type.Object(
  {
    key: Type.String(),
    title: Type.String({ description: 'Persian title' }),
    title_en: Type.String(),
    description: Type.String(),
    unit: Type.String({ description: 'Persian label saying currency and per in words, e.g. ریال/گرم, دلار/اونس, ریال/۱۰۰ ین' }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code of the price, e.g. IRR, USD, EUR; XXX for an index', examples: ['IRR'] }),
    per: Type.Union(
      PER_UNITS.map((p) => Type.Literal(p)),
      { description: 'What one price buys: a measure, a coin, one unit (or 10, 100, 1000, 1000000 units) of the named currency or token, or an index point' },
    ),
    category: Type.Union(CATEGORIES.map((c) => Type.Literal(c))),
    source_key: Type.String(),
    aliases: Type.String({ description: 'Comma-separated alternative keys, "" when none' }),
    status: Type.Literal('active'),
  },
  { $id: 'Reference', additionalProperties: false },
);

export const RateSchema = Type.Object(
  {
    key: Type.String(),
    title: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()], { description: 'The price exactly as the source gave it; null when unavailable' }),
    unit: Type.String(),
    source_key: Type.String(),
    updated_at: Type.Union([Timestamp, Type.Null()]),
    status: Type.Union([Type.Literal('ok'), Type.Literal('stale'), Type.Literal('unavailable'), Type.Literal('historical')], {
      description: '`historical` for a value read from history (`?at=`)',
    }),
    source: Type.Union([Type.String(), Type.Null()], { description: 'The source that supplied the value' }),
    stale_seconds: Type.Optional(Type.Integer({ description: 'Age of a stale value in seconds' })),
    day_open: DayNumber('The first value served today (calendar day in the configured zone)'),
    day_high: DayNumber('The highest value served today'),
    day_low: DayNumber('The lowest value served today'),
    prev_close: DayNumber('The last value served on the previous day'),
    change: DayNumber('value − prev_close, exactly'),
    change_percent: DayNumber('change ÷ prev_close × 100, two decimals'),
  },
  { $id: 'Rate', additionalProperties: false },
);

/** For endpoints that take no query parameter: any one given is an error that names it. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const CatalogueQuery = Type.Object(
  {
    // An enum rather than a union of literals, so a bad value's error lists the allowed ones.
    category: Type.Optional(Type.Unsafe<Category>({ type: 'string', enum: [...CATEGORIES] })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Matches key, alias, title and title_en' })),
  },
  { additionalProperties: false },
);

export const CatalogueResponse = Type.Object(
  { ...Ok, count: Type.Integer(), references: Type.Array(Type.Ref(ReferenceSchema)) },
  { $id: 'CatalogueResponse', additionalProperties: false },
);

export const DetailParams = Type.Object({
  keys: Type.String({ description: 'One to ten comma-separated reference keys or aliases', examples: ['usd_sell,coin_emami,gold_18k'] }),
});

export const DetailResponse = Type.Object(
  {
    ...Ok,
    count: Type.Integer(),
    rates: Type.Array(Type.Ref(RateSchema)),
    meta: Type.Object(
      {
        max_keys: Type.Literal(10),
        includes_prices: Type.Literal(true),
        unknown_keys: Type.Array(Type.String()),
        denied_keys: Type.Array(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'DetailResponse', additionalProperties: false },
);

export const StatusResponse = Type.Object(
  {
    ...Ok,
    service: Type.Object({ state: State, message: Type.String() }, { additionalProperties: false }),
    last_check: Type.Union([Timestamp, Type.Null()]),
    last_update: Type.Union([Timestamp, Type.Null()]),
    endpoints: Type.Array(Type.Object({ name: Type.String(), path: Type.String(), state: State }, { additionalProperties: false })),
    store: Type.Object(
      {
        state: State,
        since: Timestamp,
        error: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: false, description: 'The account and usage store: while `down`, rates are served from memory and usage is buffered.' },
    ),
    sources: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          state: State,
          last_update: Type.Union([Timestamp, Type.Null()]),
          age_seconds: Type.Union([Type.Integer(), Type.Null()]),
          age_text: Type.String(),
          error: Type.Union([Type.String(), Type.Null()]),
        },
        { additionalProperties: false },
      ),
    ),
    nodes: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'Host, process id and a random tail.' }),
          role: Type.String({ description: '`all`, `api` or `ingest`.' }),
          leader: Type.Boolean({ description: 'Whether this node is the ingest leader: it reads the sources and publishes every snapshot.' }),
          version: Type.Union([Type.Integer(), Type.Null()], { description: 'The snapshot version the node serves; null before its first.' }),
          last_seen: Timestamp,
        },
        { additionalProperties: false },
      ),
      { description: 'The live processes of this deployment (one without Redis).' },
    ),
    redis: Type.Union([Type.Object({ state: State }, { additionalProperties: false }), Type.Null()], {
      description: 'Redis, which the nodes share limits, snapshots and change notices through; null when the service runs as one process without it. While `down`, each node serves its latest snapshot and limits each key to its share.',
    }),
  },
  { $id: 'StatusResponse', additionalProperties: false },
);

export const HealthResponse = Type.Object({ ...Ok }, { $id: 'HealthResponse', additionalProperties: false });

/** Error responses an authenticated route may give. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref(ErrorSchema)]));
}

export const SHARED_SCHEMAS: TSchema[] = [ErrorSchema, ReferenceSchema, RateSchema, CatalogueResponse, DetailResponse, StatusResponse, HealthResponse];

export const WebserviceParams = Type.Object({ username: Type.String({ description: 'The account the key belongs to' }) });

export const LegacyEntrySchema = Type.Object(
  {
    title: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()]),
    unit: Type.String(),
    updated_at: Type.Union([Timestamp, Type.Null()]),
    date_jalali: Type.Union([Type.String({ description: 'Solar Hijri date, YYYY/MM/DD' }), Type.Null()]),
    change: Type.Union([Type.Number(), Type.Null()], { description: 'value − previous day close, exactly; null when not known' }),
    change_percent: Type.Union([Type.Number(), Type.Null()], { description: 'change in percent of the previous close, two decimals; null when not known' }),
    status: Type.Union([Type.Literal('ok'), Type.Literal('stale'), Type.Literal('unavailable')]),
    stale_seconds: Type.Union([Type.Integer(), Type.Null()], { description: 'Age of a stale value in seconds; null while fresh' }),
  },
  { $id: 'LegacyEntry', additionalProperties: false },
);

export const WebserviceResponse = Type.Object(
  { ...Ok, server_time: Type.Integer({ description: 'Unix seconds' }) },
  { $id: 'WebserviceResponse', additionalProperties: Type.Ref(LegacyEntrySchema), description: 'Flat legacy shape: one property per allowed reference key' },
);

export const UsageQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })) },
  { additionalProperties: false },
);

export const UsageResponse = Type.Object(
  {
    ...Ok,
    account: Type.String(),
    plan: Type.String(),
    daily: Type.Array(Type.Object({ date: Type.String(), requests: Type.Integer(), errors: Type.Integer() }, { additionalProperties: false })),
    services: Type.Array(Type.Object({ service: Type.String(), requests: Type.Integer(), share: Type.Number() }, { additionalProperties: false })),
    errors: Type.Array(
      Type.Object({ at: Timestamp, service: Type.String(), path: Type.String(), http_status: Type.Integer(), error: Type.String() }, { additionalProperties: false }),
    ),
  },
  { $id: 'UsageResponse', additionalProperties: false },
);

export const DetailQuery = Type.Object(
  {
    at: Type.Optional(
      Type.String({
        description: 'The values as served at this moment (a date-time with offset, or a date: that day\'s close); service `history`',
        examples: ['2026-11-01T10:00:00+03:30', '2026-11-01'],
      }),
    ),
  },
  { additionalProperties: false },
);

export const HistoryParams = Type.Object({
  key: Type.String({ pattern: KEY_PATTERN.source, description: 'One reference key or alias', examples: ['usd_free'] }),
});

const DateInput = (description: string) =>
  Type.String({ description: `${description}: a date (2026-11-01), a Jalali date (1405-08-10; a year below 1700 is Jalali) or a date-time with an offset`, examples: ['2026-11-01'] });

export const HistoryQuery = Type.Object(
  {
    interval: Type.Optional(Type.Unsafe<(typeof INTERVALS)[number]>({ type: 'string', enum: [...INTERVALS], default: '1d', description: `Candle length: ${INTERVALS.join(', ')}` })),
    from: Type.Optional(DateInput('First candle (default: 30 candles before `to`)')),
    to: Type.Optional(DateInput('Last candle (default: now); a date includes that whole day')),
  },
  { additionalProperties: false },
);

export const CandleSchema = Type.Object(
  {
    t: Timestamp,
    t_jalali: Type.String({ description: 'Candle start in the Solar Hijri calendar, YYYY/MM/DD HH:MM:SS', examples: ['1405/08/30 14:00:00'] }),
    open: Type.Number(),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number(),
    points: Type.Integer({ description: 'Values served in the candle (0 for imported daily candles)' }),
  },
  { $id: 'Candle', additionalProperties: false },
);

export const HistoryResponse = Type.Object(
  {
    ...Ok,
    key: Type.String(),
    title: Type.String(),
    unit: Type.String(),
    currency: Type.Union([Type.String(), Type.Null()]),
    per: Type.Union([Type.String(), Type.Null()]),
    interval: Type.Union(INTERVALS.map((interval) => Type.Literal(interval))),
    from: Timestamp,
    to: Timestamp,
    count: Type.Integer(),
    candles: Type.Array(Type.Ref(CandleSchema), { description: 'Oldest first; intervals with no value served are absent' }),
  },
  { $id: 'HistoryResponse', additionalProperties: false },
);

SHARED_SCHEMAS.push(LegacyEntrySchema, WebserviceResponse, UsageResponse, CandleSchema, HistoryResponse);
