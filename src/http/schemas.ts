import { Kind, Type, TypeRegistry, type SchemaOptions, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { CATEGORIES, PER_UNITS } from '../domain/reference.js';
import { INTERVALS } from '../history/ranges/buckets.js';
import { CURRENCIES } from '../domain/currency.js';
import { ERROR_STATUS } from '../domain/errors.js';
import { DROP_REASONS, DROP_SAMPLE } from '../sources/drops.js';
import { FORMAT_NAMES } from '../sources/formats/spec.js';
import { SOURCE_TYPES } from '../sources/health.js';
import { UNKNOWN_KEY_CHARS, UNKNOWN_KEY_SAMPLE } from '../sources/unknown-keys.js';

/** Every schema of the API: routes validate requests with them and /openapi.json is generated from them. */

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

const Per = StringEnum(PER_UNITS, {
  description: 'What one price buys: a measure, a coin, one unit (or 10, 100, 1000, 1000000 units) of the named currency or token, or an index point',
});
export const CurrencySchema = StringEnum(CURRENCIES, {
  $id: 'Currency',
  description:
    'The currency of a price: an ISO 4217 code (IRR, USD, EUR…; XXX for an index, which has none), or IRT (the toman, not ISO 4217) for a rial price shown with ?unit=toman',
  examples: ['IRR'],
});
const Currency = () => Type.Ref(CurrencySchema);

export const ReferenceSchema = Type.Object(
  {
    key: Type.String(),
    title: Type.String({ description: 'Persian title' }),
    title_en: Type.String(),
    description: Type.String(),
    unit: Type.String({ description: 'Persian label saying currency and per in words, e.g. ریال/گرم, دلار/اونس, ریال/۱۰۰ ین' }),
    currency: Currency(),
    per: Per,
    category: Type.Union(CATEGORIES.map((c) => Type.Literal(c))),
    source_key: Type.String(),
    aliases: Type.String({ description: 'Comma-separated alternative keys, "" when none' }),
    status: Type.Literal('active'),
    in_plan: Type.Boolean({ description: "Whether the reference is inside the calling key's allowance (its account's selection or its plan's defaults)" }),
  },
  { $id: 'Reference', additionalProperties: false },
);

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

export const CatalogueResponse = Type.Object(
  { ...Ok, count: Type.Integer(), references: Type.Array(Type.Ref(ReferenceSchema)) },
  { $id: 'CatalogueResponse', additionalProperties: false },
);

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
          type: StringEnum(SOURCE_TYPES, { description: 'A configured `file`, `http` or `manual` source, or `derived`: the references the config computes by formula (docs/configuration.md#derived-references).' }),
          state: State,
          last_update: Type.Union([Timestamp, Type.Null()], { description: 'When its kept data was updated; for `derived`, the oldest input of the values it computes.' }),
          age_seconds: Type.Union([Type.Integer(), Type.Null()]),
          age_text: Type.String(),
          error: Type.Union([Type.String(), Type.Null()]),
          unknown_keys: Type.Object(
            {
              count: Type.Integer({ minimum: 0, description: 'Items whose key matches no reference (a repeated key counts each time).' }),
              sample: Type.Array(Type.String({ maxLength: UNKNOWN_KEY_CHARS }), {
                maxItems: UNKNOWN_KEY_SAMPLE,
                description: `The first of those keys, in document order: at most ${UNKNOWN_KEY_SAMPLE}, each cut to ${UNKNOWN_KEY_CHARS} characters.`,
              }),
            },
            { additionalProperties: false, description: "Item keys of the source's kept document that no catalogue reference reads: skipped, never served (a misspelt `source_key`, say)." },
          ),
          format: StringEnum([...FORMAT_NAMES, 'formula'], { description: "The shape the source's document is read in (docs/configuration.md#formats); `formula` for the derived source." }),
          mapped: Type.Integer({ minimum: 0, description: 'Items of the latest document read that gave a value for a catalogue reference; for `derived`, the formulas that gave a value.' }),
          dropped: Type.Integer({ minimum: 0, description: 'Items of the latest document read that were dropped: never served.' }),
          dropped_reasons: Type.Array(
            Type.Object(
              {
                reason: StringEnum(DROP_REASONS),
                description: Type.String({ description: 'What the reason means, in English.' }),
                count: Type.Integer({ minimum: 1 }),
                source_keys: Type.Array(Type.String(), {
                  maxItems: DROP_SAMPLE,
                  description: `The first catalogue source keys dropped for it (at most ${DROP_SAMPLE}); a key only the feed names is counted, never named here.`,
                }),
              },
              { additionalProperties: false },
            ),
            { description: 'Why the dropped items were dropped, one entry per reason: a fixed code, never the feed\'s own text.' },
          ),
          derived: Type.Optional(
            Type.Object(
              {
                references: Type.Integer({ minimum: 1, description: 'References the config computes by formula.' }),
                computed: Type.Integer({ minimum: 0, description: 'Of those, the formulas that gave a value in the snapshot served (every input had a value; no division by zero).' }),
                stale_inputs: Type.Array(Type.String(), { description: 'Reference keys some formula reads whose value is served stale: the derived values computed from them are stale too.' }),
                missing_inputs: Type.Array(Type.String(), { description: 'Reference keys some formula reads that have no value: the formulas reading them give none.' }),
              },
              {
                additionalProperties: false,
                description: 'Only on the `derived` source. Its state is `active` when every formula gave a value from fresh inputs, `degraded` when some input is stale or has no value while at least one value is computed, `down` when none is.',
              },
            ),
          ),
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
    history: Type.Object(
      {
        state: State,
        minute_days: Type.Integer({ description: 'Days one-minute candles are kept; hourly and daily candles are kept for good.' }),
        last_written: Type.Union([Timestamp, Type.Null()], { description: 'When the newest value written to the history was served (the close of the newest candle); null before the first.' }),
        recording: Type.Boolean({ description: 'Whether the node that answered records candles (the ingest leader does).' }),
        pending_candles: Type.Integer({ minimum: 0, description: 'Candles the answering node recorded and has not written yet: they wait in memory while the store is away.' }),
      },
      { additionalProperties: false, description: 'Candle recording behind `/v1/rates/{key}/history` and `?at=`: `down` while the store is, `degraded` while no node records.' },
    ),
    stream: Type.Object(
      {
        state: State,
        open_streams: Type.Integer({ minimum: 0, description: 'Push streams open on the node that answered.' }),
      },
      { additionalProperties: false, description: 'The push stream (`/v1/stream`): its state follows the rates it carries.' },
    ),
  },
  { $id: 'StatusResponse', additionalProperties: false },
);

export const HealthResponse = Type.Object({ ...Ok }, { $id: 'HealthResponse', additionalProperties: false });

/** Error responses an authenticated route may give. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref(ErrorSchema)]));
}

export const SHARED_SCHEMAS: TSchema[] = [CurrencySchema, ErrorSchema, ReferenceSchema, MarketSchema, RateSchema, CatalogueResponse, DetailResponse, StatusResponse, HealthResponse];

export const WebserviceEntrySchema = Type.Object(
  {
    title: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()]),
    unit: Type.String(),
    currency: Currency(),
    per: Per,
    updated_at: Type.Union([Timestamp, Type.Null()]),
    date_jalali: Type.Union([Type.String({ description: 'Solar Hijri date, YYYY/MM/DD' }), Type.Null()]),
    change: Type.Union([Type.Number(), Type.Null()], { description: 'value − previous day close, exactly; null when not known' }),
    change_percent: Type.Union([Type.Number(), Type.Null()], { description: 'change in percent of the previous close, two decimals; null when not known' }),
    status: Type.Union([Type.Literal('ok'), Type.Literal('stale'), Type.Literal('unavailable')]),
    stale_seconds: Type.Union([Type.Integer(), Type.Null()], { description: 'Age of a stale value in seconds; null while fresh' }),
    market: Type.Union([Type.Ref(MarketSchema), Type.Null()], { description: 'Its market; null for a reference no market takes' }),
  },
  { $id: 'WebserviceEntry', additionalProperties: false },
);

export const WebserviceResponse = Type.Object(
  { ...Ok, server_time: Type.Integer({ description: 'Unix seconds' }) },
  { $id: 'WebserviceResponse', additionalProperties: Type.Ref(WebserviceEntrySchema), description: 'Flat webservice shape: one property per allowed reference key' },
);

export const UsageResponse = Type.Object(
  {
    ...Ok,
    account: Type.String(),
    plan: Type.String(),
    daily: Type.Array(Type.Object({ date: Type.String(), requests: Type.Integer(), errors: Type.Integer() }, { additionalProperties: false })),
    services: Type.Array(Type.Object({ service: Type.String(), requests: Type.Integer(), share: Type.Number() }, { additionalProperties: false })),
    errors: Type.Array(
      Type.Object(
        {
          at: Timestamp,
          service: Type.String(),
          path: Type.String({ description: 'The path and query of the latest failure in the entry' }),
          http_status: Type.Integer(),
          error: Type.String(),
          count: Type.Integer({ minimum: 1, description: 'How many failures the entry folds' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The error log, newest first: the last 1,000 entries or 30 days. Repeats of one error on one service within one minute are one entry with a `count`; `at`, `path` and `http_status` are those of the latest.',
      },
    ),
  },
  { $id: 'UsageResponse', additionalProperties: false },
);

export const WebhooksResponse = Type.Object(
  {
    ...Ok,
    account: Type.String(),
    endpoints: Type.Array(
      Type.Object(
        {
          id: Type.String({ examples: ['wh_3f9c2a1b7d4e8f60'] }),
          url: Type.String(),
          state: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
          rules: Type.Array(Type.String(), { description: 'Alert rules as given: `<key><op><number>` or `<key>.change_percent<op><number>`' }),
          events: Type.Array(Type.Union([Type.Literal('stale'), Type.Literal('recovered')])),
          failing_since: Type.Union([Timestamp, Type.Null()], { description: 'The first failed attempt since the last success; null while deliveries succeed' }),
          disabled_reason: Type.Union([Type.String(), Type.Null()]),
          created_at: Timestamp,
          pending: Type.Integer({ minimum: 0, description: 'Deliveries waiting to be sent or retried: at most 1,000 per endpoint' }),
          superseded: Type.Integer({ minimum: 0, description: 'Deliveries replaced before they were delivered by a newer event about the same rule or reference, since the endpoint was added' }),
          dropped: Type.Integer({ minimum: 0, description: 'Deliveries dropped, oldest first, because 1,000 were already waiting, since the endpoint was added' }),
        },
        { additionalProperties: false },
      ),
      { description: "The account's endpoints, oldest first; secrets are never shown" },
    ),
    deliveries: Type.Array(
      Type.Object(
        {
          at: Timestamp,
          endpoint: Type.String(),
          delivery: Type.Union([Type.String(), Type.Null()], { description: 'The delivery id, sent as `webhook-id` with each attempt; null on an endpoint’s own line' }),
          type: Type.Union([Type.Literal('rate.alert'), Type.Literal('rate.stale'), Type.Literal('rate.recovered'), Type.Null()]),
          attempt: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
          status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the endpoint answered; null when it did not answer' }),
          error: Type.Union([Type.String(), Type.Null()]),
          duration_ms: Type.Union([Type.Integer(), Type.Null()]),
          outcome: Type.Union([Type.Literal('delivered'), Type.Literal('retrying'), Type.Literal('given_up'), Type.Literal('disabled'), Type.Literal('superseded'), Type.Literal('dropped')]),
          count: Type.Integer({ minimum: 1, description: 'How many events of this outcome to this endpoint the entry folds (one minute); the other fields are the latest one’s' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The delivery log, newest first: the last 100 entries of 30 days. Events of one outcome to one endpoint within one minute (attempts delivered or retrying, deliveries given up, superseded or dropped, the endpoint disabled) are one entry with a `count`.',
      },
    ),
  },
  { $id: 'WebhooksResponse', additionalProperties: false },
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
    unit: Type.String({ description: 'Persian label of the candle values (تومان/… with ?unit=toman)' }),
    currency: Currency(),
    per: Per,
    interval: Type.Union(INTERVALS.map((interval) => Type.Literal(interval))),
    from: Timestamp,
    to: Timestamp,
    count: Type.Integer(),
    candles: Type.Array(Type.Ref(CandleSchema), { description: 'Oldest first; intervals with no value served are absent' }),
  },
  { $id: 'HistoryResponse', additionalProperties: false },
);

SHARED_SCHEMAS.push(WebserviceEntrySchema, WebserviceResponse, UsageResponse, WebhooksResponse, CandleSchema, HistoryResponse);

/** An exact decimal, written as a JSON number with the digits it has (never through a float). */
const Exact = (description: string) => Type.Number({ description });

const ConvertSide = (description: string) => Type.String({ description: `${description}: the canonical reference key, or IRR / IRT` });

export const ConvertResponse = Type.Object(
  {
    ...Ok,
    from: ConvertSide('What the amount counts'),
    to: ConvertSide('What the result counts'),
    amount: Exact('The amount asked, in normal form'),
    result: Exact('amount × price of from ÷ price of to: exact when the quotient terminates, else rounded half-even to 6 decimals'),
    rates: Type.Array(Type.Ref(RateSchema), { description: 'The rates used, as the detail endpoint serves them (in toman with unit=toman); none for IRR and IRT' }),
  },
  { $id: 'ConvertResponse', additionalProperties: false },
);

export const JewelleryResponse = Type.Object(
  {
    ...Ok,
    weight: Exact('Grams, as asked'),
    karat: Type.Union([Type.Literal(18), Type.Literal(21), Type.Literal(22), Type.Literal(24)]),
    making_percent: Exact('Making charge, percent'),
    profit_percent: Exact('Profit, percent'),
    vat_percent: Exact('VAT, percent'),
    currency: Type.Union([Type.Literal('IRR'), Type.Literal('IRT')], { description: 'IRT with unit=toman' }),
    gram_price: Exact('The gram price of the karat used, in currency'),
    gold: Exact('weight × gram_price, exact'),
    making: Exact('gold × making_percent ÷ 100, exact'),
    profit: Exact('(gold + making) × profit_percent ÷ 100, exact'),
    vat: Exact('(making + profit) × vat_percent ÷ 100, exact'),
    total: Type.Integer({ description: 'gold + making + profit + vat, rounded half up to a whole rial (or toman)' }),
    rates: Type.Array(Type.Ref(RateSchema), { description: 'The gram price used, as the detail endpoint serves it' }),
  },
  { $id: 'JewelleryResponse', additionalProperties: false },
);

SHARED_SCHEMAS.push(ConvertResponse, JewelleryResponse);

/** An exact decimal as a string in a peer's unit (navasan writes its values as strings). */
const PeerDecimal = (description: string) => Type.String({ pattern: '^-?\\d+(?:\\.\\d+)?$', description });

export const NavasanItemSchema = Type.Object(
  {
    value: PeerDecimal("The price in navasan's unit (toman; thousands of toman for coins and melted gold; dollars for world prices), exact"),
    change: Type.Union([Type.Number(), Type.Null()], { description: 'Change since the previous close, in the same unit, exact; null when not known' }),
    timestamp: Type.Integer({ description: 'Unix seconds of the value\'s update' }),
    date: Type.String({ description: 'Jalali date and Tehran time of the update, YYYY-MM-DD HH:MM:SS', examples: ['1405-09-07 16:29:03'] }),
  },
  { $id: 'NavasanItem', additionalProperties: false },
);

export const NavasanLatestResponse = Type.Object({}, { $id: 'NavasanLatestResponse', additionalProperties: Type.Ref(NavasanItemSchema), description: 'One property per navasan item served' });

export const NavasanCandleSchema = Type.Object(
  {
    timestamp: Type.Integer({ description: 'Unix seconds of the day\'s start (local midnight)' }),
    date: Type.String({ description: 'Jalali date of the day, YYYY-MM-DD', examples: ['1405-09-07'] }),
    open: PeerDecimal('Exact, in the item\'s unit'),
    high: PeerDecimal('Exact, in the item\'s unit'),
    low: PeerDecimal('Exact, in the item\'s unit'),
    close: PeerDecimal('Exact, in the item\'s unit'),
  },
  { $id: 'NavasanCandle', additionalProperties: false },
);

export const NavasanOhlcResponse = Type.Array(Type.Ref(NavasanCandleSchema), { $id: 'NavasanOhlcResponse', description: 'Daily candles, oldest first' });

export const NavasanUsageResponse = Type.Object(
  {
    monthly_usage: Type.Integer({ description: 'Requests of your account this calendar month, in the service\'s zone' }),
    daily_usage: Type.Integer({ description: 'Requests of your account today (the day /v1/usage counts under)' }),
    hourly_usage: Type.Integer({ description: 'Requests of your account this hour' }),
  },
  { $id: 'NavasanUsageResponse', additionalProperties: false },
);

export const BrsapiItemSchema = Type.Object(
  {
    date: Type.String({ description: 'Jalali date of the update, YYYY/MM/DD', examples: ['1405/09/07'] }),
    time: Type.String({ description: 'Tehran time of the update, HH:MM', examples: ['16:29'] }),
    time_unix: Type.Integer({ description: 'Unix seconds of the update' }),
    symbol: Type.String(),
    name_en: Type.String(),
    name: Type.String(),
    price: Type.Number({ description: 'Exact, written from the decimal (never through a float): toman, or dollars' }),
    change_value: Type.Union([Type.Number(), Type.Null()], { description: 'Change since the previous close in the same unit, exact; null when not known' }),
    change_percent: Type.Union([Type.Number(), Type.Null()], { description: 'Change in percent of the previous close, two decimals; null when not known' }),
    unit: Type.Union([Type.Literal('تومان'), Type.Literal('دلار')]),
  },
  { $id: 'BrsapiItem', additionalProperties: false },
);

export const BrsapiMarketResponse = Type.Object(
  { gold: Type.Array(Type.Ref(BrsapiItemSchema)), currency: Type.Array(Type.Ref(BrsapiItemSchema)), cryptocurrency: Type.Array(Type.Ref(BrsapiItemSchema)) },
  { $id: 'BrsapiMarketResponse', additionalProperties: false },
);

SHARED_SCHEMAS.push(NavasanItemSchema, NavasanLatestResponse, NavasanCandleSchema, NavasanOhlcResponse, NavasanUsageResponse, BrsapiItemSchema, BrsapiMarketResponse);
export const ClosedDaySchema = Type.Object(
  {
    date: Type.String({ description: 'Gregorian date in the market\'s zone, YYYY-MM-DD', examples: ['2027-03-21'] }),
    date_jalali: Type.String({ description: 'Solar Hijri date in the market\'s zone, YYYY/MM/DD', examples: ['1406/01/01'] }),
    reason: Type.String({ description: 'Why it is closed, in English', examples: ['Nowruz'] }),
    reason_fa: Type.String({ description: 'The same in Persian', examples: ['نوروز'] }),
  },
  { $id: 'ClosedDay', additionalProperties: false },
);

export const CalendarResponse = Type.Object(
  {
    ...Ok,
    market: Type.String(),
    from: Type.String({ description: 'First day, YYYY-MM-DD' }),
    to: Type.String({ description: 'Last day, included, YYYY-MM-DD' }),
    closed: Type.Array(Type.Ref(ClosedDaySchema), { description: 'One entry per closed day, in date order' }),
  },
  { $id: 'CalendarResponse', additionalProperties: false },
);

SHARED_SCHEMAS.push(ClosedDaySchema, CalendarResponse);
