import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { firstProblem } from './config-errors.js';
import { parseConfigJson } from './config-json.js';
import { DERIVED_SOURCE, FormulaError, parseFormula, type Formula } from './domain/formula.js';
import { SERVICES } from './domain/plan.js';
import { CATEGORIES } from './domain/reference.js';
import { DEFAULT_MARKET_SPECS, marketRules, withoutClosures, type MarketSpec } from './domain/market-specs.js';
import { knownHolidayCountry } from './catalogue/holidays.js';
import { isValidTimeZone, ZoneTime } from './domain/time.js';
import { addressRefusal } from './sources/address-rule.js';
import { compileFormat, FormatConfigError } from './sources/formats/compile.js';
import { FORMAT_NAMES } from './sources/formats/spec.js';
import { DEFAULT_MAX_BACKOFF_SECONDS, DEFAULT_MAX_BYTES } from './sources/defaults.js';
import { DEFAULT_CLOCK_SKEW_MS } from './sources/source-data.js';
import type { SourceConfig } from './sources/monitor.js';
import { DEFAULT_FRAME_ANCESTORS, parseFrameAncestors } from './web/security-headers.js';

export class ConfigError extends Error {}

const NAME = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

const SourceSchema = Type.Object(
  {
    name: Type.String({ pattern: NAME }),
    type: Type.Union([Type.Literal('file'), Type.Literal('http'), Type.Literal('manual')]),
    path: Type.Optional(Type.String({ minLength: 1 })),
    url: Type.Optional(Type.String({ pattern: '^https?://' })),
    max_age_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
    poll_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 86_400 })),
    timeout_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 120 })),
    max_backoff_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 86_400 })),
    max_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 30, description: 'Decoded document size at most, in bytes (default 16 MiB)' })),
    follow_redirects: Type.Optional(Type.Boolean({ description: 'http: follow redirects (default false: refused)' })),
    allow_insecure: Type.Optional(Type.Boolean({ description: 'http: allow plain http:// to a host that is not loopback (default false)' })),
    clock_skew_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3600, description: 'How far ahead of the receive time a timestamp is clamped rather than refused (default 30)' })),
    format: Type.Optional(Type.Union(FORMAT_NAMES.map((name) => Type.Literal(name)))),
    items: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1 }),
        Type.Union([
          Type.String({ minLength: 1 }),
          Type.Object({ path: Type.String({ minLength: 1 }), time_path: Type.Optional(Type.String({ minLength: 1 })), scale: Type.Optional(Type.String()) }, { additionalProperties: false }),
        ]),
        { description: 'mapping and ecb: each catalogue source_key and where its value is read' },
      ),
    ),
    updated_at_path: Type.Optional(Type.String({ minLength: 1, description: "mapping: the JSONPath of the document's time" })),
  },
  { additionalProperties: false },
);

export const PlanFieldsSchema = Type.Object(
  {
    services: Type.Optional(Type.Array(Type.Union(SERVICES.map((s) => Type.Literal(s))), { uniqueItems: true })),
    max_references: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    default_references: Type.Optional(Type.Array(Type.String({ pattern: NAME }))),
    refresh_interval_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
    requests_per_minute: Type.Optional(Type.Integer({ minimum: 1 })),
    requests_per_day: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    history_days: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100_000 }), Type.Null()])),
    max_streams: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
    // At least a second (a stream must get its snapshot out), at most 30 days (no connection lives forever).
    max_stream_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_592_000 })),
    max_webhooks: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: 'Webhook endpoints an account may register (service alerts)' })),
  },
  { additionalProperties: false },
);

/** Per-reference screening (docs/configuration.md#screening); `"*"` sets it for every reference, a key overrides it field by field. */
export const ScreeningFieldsSchema = Type.Object(
  {
    max_jump_percent: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100_000 })),
    confirm_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
    outlier_mads: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000 })),
    outlier_min_percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  },
  { additionalProperties: false },
);

const ReasonFields = {
  reason: Type.String({ minLength: 1, maxLength: 200, description: 'Why the market is closed, in English' }),
  reason_fa: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The same in Persian (default: reason)' })),
};

/** One market (docs/configuration.md#markets); a built-in market's fields given here replace its defaults one by one. */
export const MarketFieldsSchema = Type.Object(
  {
    timezone: Type.Optional(Type.String({ minLength: 1, description: 'The zone its days and weekly times are in' })),
    weekly: Type.Optional(
      Type.Array(Type.Object({ from: Type.String({ minLength: 1 }), to: Type.String({ minLength: 1 }), ...ReasonFields }, { additionalProperties: false }), {
        maxItems: 14,
        description: 'Weekly closures: from "friday 22:00" to "sunday 22:00", in the market zone',
      }),
    ),
    annual: Type.Optional(Type.Array(Type.Object({ date: Type.String({ pattern: '^\\d{2}-\\d{2}$' }), ...ReasonFields }, { additionalProperties: false }), { maxItems: 366, description: 'Gregorian month-day closures every year: "12-25"' })),
    holidays: Type.Optional(Type.Union([Type.String({ pattern: '^[A-Z]{2}$' }), Type.Null()], { description: 'A country whose public holidays close the market (date-holidays), e.g. "IR"; null: none' })),
    references: Type.Optional(Type.Array(Type.String({ pattern: NAME }), { uniqueItems: true })),
    categories: Type.Optional(Type.Array(Type.Union(CATEGORIES.map((c) => Type.Literal(c))), { uniqueItems: true })),
    currencies: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Z]{3}$' }), { uniqueItems: true })),
    default: Type.Optional(Type.Boolean({ description: 'Takes every reference no market names' })),
  },
  { additionalProperties: false },
);

const ConfigFileSchema = Type.Object(
  {
    sources: Type.Optional(Type.Array(SourceSchema, { minItems: 1 })),
    source_priority: Type.Optional(Type.Record(Type.String({ pattern: NAME }), Type.Array(Type.String({ pattern: NAME }), { minItems: 1 }))),
    catalogue: Type.Optional(Type.String({ minLength: 1 })),
    plans: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' }), PlanFieldsSchema)),
    screening: Type.Optional(Type.Record(Type.String({ pattern: `^\\*$|${NAME}` }), ScreeningFieldsSchema)),
    timezone: Type.Optional(Type.String({ minLength: 1 })),
    derived: Type.Optional(
      Type.Record(Type.String({ pattern: NAME }), Type.String({ minLength: 1, maxLength: 1000 }), {
        description: 'References computed from others: reference key or alias → formula of + - * /, parentheses, decimal constants and reference names',
      }),
    ),
    history: Type.Optional(
      Type.Object(
        { minute_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Days one-minute candles are kept; hourly and daily candles are kept forever' })) },
        { additionalProperties: false },
      ),
    ),
    markets: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' }), MarketFieldsSchema, { description: 'Markets and their calendars; merged over the built-in tehran, international and crypto' })),
    webhooks: Type.Optional(
      Type.Object(
        { allow_private: Type.Optional(Type.Boolean({ description: 'Allow webhook URLs to private and loopback addresses, over http:// too (default false: public https:// only)' })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type PlanFields = Static<typeof PlanFieldsSchema>;
export type ScreeningFields = Static<typeof ScreeningFieldsSchema>;

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Where `dataDir` came from, for help text and error messages. */
  dataDirOrigin: 'NERKH_DATA_DIR' | 'default ./var';
  databaseUrl: string | null;
  redisUrl: string | null;
  /** Namespaces every Redis key and channel (`NERKH_REDIS_PREFIX`), so several deployments can share one Redis. */
  redisPrefix: string;
  logLevel: string;
  /** The config file read, or null for the built-in demo setup. */
  configPath: string | null;
  /** Where `configPath` came from, for help text and error messages. */
  configOrigin: 'NERKH_CONFIG' | './nerkh.config.json' | 'built-in demo';
  /** True when the demo sources (and their feeder) are in use. */
  demo: boolean;
  sources: SourceConfig[];
  sourcePriority: Record<string, string[]>;
  cataloguePath: string;
  plans: Record<string, PlanFields>;
  /** Screening rules by reference key or alias, `"*"` for every reference; checked against the catalogue at start. */
  screening: Record<string, ScreeningFields>;
  timezone: string;
  /** Derived references as the config names them (key or alias) → their parsed formula; checked against the catalogue at start. */
  derived?: Record<string, Formula>;
  history: HistoryConfig;
  /** The markets, built-in ones merged with the config's (each reference's market and closures); references named are checked against the catalogue at start. */
  markets: MarketSpec[];
  webhooks: WebhooksConfig;
  /** Who may frame the HTML pages (`NERKH_FRAME_ANCESTORS`, CSP `frame-ancestors`); `'none'` unless set. */
  frameAncestors: string;
  /** The bearer token `/metrics` asks for (`NERKH_METRICS_TOKEN`); null: `/metrics` is open, as a private network expects. */
  metricsToken: string | null;
  /**
   * How long the event loop may lag before requests are shed (`NERKH_SHED_AFTER_LAG_MS`, default
   * 250). A host shared with other busy work delays the loop without the service being at fault:
   * there a larger figure keeps answers flowing.
   */
  shedAfterLagMs: number;
  /**
   * How busy the event loop may be, in percent of its time (`NERKH_SHED_AT_BUSY_PERCENT`, 50–100,
   * default 90), before a caller crowding the others out is shed; 100: never for busyness alone
   * (lag still sheds). On a host whose cores are shared with other busy work the same requests
   * keep the loop busier, as with the lag.
   */
  shedAtBusyPercent: number;
  /**
   * Test-only (`NERKH_CLOCK_SHIFT_MS`): the service's clock runs this far
   * ahead of (or behind) the system's, so a test can start a spawned server
   * at a chosen moment (a few seconds into a minute, clear of midnight) instead
   * of waiting for it; 0 unless set.
   */
  clockShiftMs: number;
}

export interface HistoryConfig {
  /** Days one-minute candles are kept (hourly and daily candles are kept forever). */
  minuteDays: number;
}

export interface WebhooksConfig {
  /** Webhook URLs may name private and loopback addresses, over http:// too (config `webhooks.allow_private`). */
  allowPrivate: boolean;
  /**
   * Test-only (`NERKH_WEBHOOK_TIME_SCALE`): every webhook duration (the retry
   * back-off, the 24 h of retries, the 3 days before disabling, the 5 minutes
   * before `stale`) multiplied by this; 1 unless set.
   */
  timeScale: number;
}

export const DEFAULT_MINUTE_DAYS = 90;
/** How far NERKH_CLOCK_SHIFT_MS may move the clock: a year either way. */
const CLOCK_SHIFT_LIMIT_MS = 366 * 86_400_000;

/** The event-loop lag past which requests are shed, unless NERKH_SHED_AFTER_LAG_MS says otherwise. */
export const DEFAULT_SHED_AFTER_LAG_MS = 250;
/** The event loop's busy share (percent) past which a dominant caller is shed, unless NERKH_SHED_AT_BUSY_PERCENT says otherwise. */
export const DEFAULT_SHED_AT_BUSY_PERCENT = 90;

/** The installation's folder (data/, bin/): the nearest one above this module holding a package.json, from src/, dist/ or dist/bundle/ alike. */
export const PACKAGE_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));
export const BUNDLED_CATALOGUE = resolve(PACKAGE_ROOT, 'data', 'catalogue');
export const DEMO_SOURCE_NAMES = ['demo-alpha', 'demo-beta', 'demo-gamma'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Read the config file and environment once; every later reader gets this object. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): AppConfig {
  const dataDir = resolve(cwd, env.NERKH_DATA_DIR || './var');
  const configPath = env.NERKH_CONFIG ? resolve(cwd, env.NERKH_CONFIG) : existsSync(resolve(cwd, 'nerkh.config.json')) ? resolve(cwd, 'nerkh.config.json') : null;
  const file = configPath ? readConfigFile(configPath) : {};
  const base = configPath ? dirname(configPath) : cwd;

  const timezone = file.timezone ?? 'Asia/Tehran';
  if (!isValidTimeZone(timezone)) throw new ConfigError(`config: timezone: unknown time zone "${timezone}"`);

  const zone = new ZoneTime(timezone);
  const sources = file.sources ? file.sources.map((s, i) => sourceFromFile(s, i, base, zone)) : demoSources(dataDir);
  const names = new Set<string>();
  sources.forEach((source, i) => {
    if (names.has(source.name)) throw new ConfigError(`config: sources[${i}].name: duplicate source name "${source.name}"`);
    names.add(source.name);
  });
  const derived = derivedFormulas(file.derived ?? {});
  const hasDerived = Object.keys(derived).length > 0;
  // The derived references act as one more source, named `derived`: no configured source may take the name.
  if (hasDerived && names.has(DERIVED_SOURCE)) throw new ConfigError(`config: sources[${[...names].indexOf(DERIVED_SOURCE)}].name: "${DERIVED_SOURCE}" is the source of the derived references; name this one otherwise`);
  for (const [key, listed] of Object.entries(file.source_priority ?? {})) {
    listed.forEach((name, i) => {
      if (!names.has(name) && !(hasDerived && name === DERIVED_SOURCE)) throw new ConfigError(`config: source_priority.${key}[${i}]: unknown source "${name}"`);
    });
  }

  return {
    port: envInteger(env, 'NERKH_PORT', 8080, 0, 65_535),
    host: env.NERKH_HOST || '127.0.0.1',
    dataDir,
    dataDirOrigin: env.NERKH_DATA_DIR ? 'NERKH_DATA_DIR' : 'default ./var',
    databaseUrl: env.NERKH_DATABASE_URL || null,
    redisUrl: env.NERKH_REDIS_URL || null,
    redisPrefix: envPattern(env, 'NERKH_REDIS_PREFIX', 'nerkh:', /^[A-Za-z0-9_.:{}-]{1,64}$/, 'up to 64 letters, digits or _ . : { } -'),
    logLevel: envChoice(env, 'NERKH_LOG_LEVEL', 'info', LOG_LEVELS),
    configPath,
    configOrigin: env.NERKH_CONFIG ? 'NERKH_CONFIG' : configPath ? './nerkh.config.json' : 'built-in demo',
    demo: !file.sources,
    sources,
    sourcePriority: file.source_priority ?? {},
    cataloguePath: file.catalogue ? resolve(base, file.catalogue) : BUNDLED_CATALOGUE,
    plans: file.plans ?? {},
    screening: file.screening ?? {},
    timezone,
    derived,
    history: { minuteDays: file.history?.minute_days ?? DEFAULT_MINUTE_DAYS },
    // NERKH_MARKET_CALENDAR=off: the markets keep no weekly, annual or holiday closures (ages count wall time), as before calendars.
    markets: envChoice(env, 'NERKH_MARKET_CALENDAR', 'on', ['on', 'off']) === 'off' ? withoutClosures(marketSpecs(file.markets ?? {})) : marketSpecs(file.markets ?? {}),
    webhooks: { allowPrivate: file.webhooks?.allow_private ?? false, timeScale: envScale(env, 'NERKH_WEBHOOK_TIME_SCALE') },
    frameAncestors: envFrameAncestors(env),
    metricsToken: envMetricsToken(env),
    shedAfterLagMs: envInteger(env, 'NERKH_SHED_AFTER_LAG_MS', DEFAULT_SHED_AFTER_LAG_MS, 50, 600_000),
    shedAtBusyPercent: envInteger(env, 'NERKH_SHED_AT_BUSY_PERCENT', DEFAULT_SHED_AT_BUSY_PERCENT, 50, 100),
    clockShiftMs: envInteger(env, 'NERKH_CLOCK_SHIFT_MS', 0, -CLOCK_SHIFT_LIMIT_MS, CLOCK_SHIFT_LIMIT_MS),
  };
}

type MarketFields = Static<typeof MarketFieldsSchema>;

/**
 * The built-in markets with the config's merged over them: a field given
 * replaces the built-in one; a reference, category or currency a configured
 * market names is taken from the built-in market that named it; a configured
 * `default` takes over from the built-in one. Two configured markets naming
 * the same one, a bad time or date, or an unknown holiday country stop the start.
 */
function marketSpecs(configured: Record<string, MarketFields>): MarketSpec[] {
  const given = Object.entries(configured);
  const claims = { references: new Map<string, string>(), categories: new Map<string, string>(), currencies: new Map<string, string>() };
  for (const [name, fields] of given) {
    for (const kind of ['references', 'categories', 'currencies'] as const) {
      for (const item of fields[kind] ?? []) {
        const other = claims[kind].get(item);
        if (other !== undefined) throw new ConfigError(`config: markets.${name}.${kind}: "${item}" is already in markets.${other}.${kind}`);
        claims[kind].set(item, name);
      }
    }
  }
  const defaults = given.filter(([, fields]) => fields.default === true).map(([name]) => name);
  if (defaults.length > 1) throw new ConfigError(`config: markets.${defaults[1]}.default: only one market takes the references no market names (markets.${defaults[0]} does)`);
  const specs: MarketSpec[] = DEFAULT_MARKET_SPECS.map((spec) => ({
    ...spec,
    references: spec.references.filter((item) => !claims.references.has(item)),
    categories: spec.categories.filter((item) => !claims.categories.has(item)),
    currencies: spec.currencies.filter((item) => !claims.currencies.has(item)),
    default: defaults.length > 0 ? false : spec.default,
  }));
  for (const [name, fields] of given) {
    const index = specs.findIndex((spec) => spec.name === name);
    const base: MarketSpec = index >= 0 ? specs[index]! : { name, timezone: 'UTC', weekly: [], annual: [], holidays: null, references: [], categories: [], currencies: [], default: false };
    const spec: MarketSpec = {
      name,
      timezone: fields.timezone ?? base.timezone,
      weekly: fields.weekly ?? base.weekly,
      annual: fields.annual ?? base.annual,
      holidays: fields.holidays === undefined ? base.holidays : fields.holidays,
      references: fields.references ?? base.references,
      categories: fields.categories ?? base.categories,
      currencies: fields.currencies ?? base.currencies,
      default: fields.default ?? base.default,
    };
    if (!isValidTimeZone(spec.timezone)) throw new ConfigError(`config: markets.${name}.timezone: unknown time zone "${spec.timezone}"`);
    if (spec.holidays !== null && !knownHolidayCountry(spec.holidays)) throw new ConfigError(`config: markets.${name}.holidays: the holiday library has no country "${spec.holidays}"`);
    try {
      marketRules(spec, () => () => new Map());
    } catch (error) {
      throw new ConfigError(`config: markets.${name}.${(error as Error).message}`);
    }
    if (index >= 0) specs[index] = spec;
    else specs.push(spec);
  }
  return specs;
}

/** Each formula parsed; one that does not parse stops the start, naming it. Names are checked later, against the catalogue. */
function derivedFormulas(raw: Record<string, string>): Record<string, Formula> {
  const formulas: Record<string, Formula> = {};
  for (const [name, text] of Object.entries(raw)) {
    try {
      formulas[name] = parseFormula(text);
    } catch (error) {
      if (error instanceof FormulaError) throw new ConfigError(`config: derived.${name}: "${text}": ${error.message}`);
      throw error;
    }
  }
  return formulas;
}

function envFrameAncestors(env: NodeJS.ProcessEnv): string {
  const raw = env.NERKH_FRAME_ANCESTORS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_FRAME_ANCESTORS;
  try {
    return parseFrameAncestors(raw);
  } catch (error) {
    throw new ConfigError(`environment: NERKH_FRAME_ANCESTORS: ${(error as Error).message}`);
  }
}

/** RFC 6750's token characters; at least 16 of them, so the token is not guessable by a scraper's neighbour. */
const METRICS_TOKEN = /^[A-Za-z0-9\-._~+/]{16,256}=*$/;

/** The metrics token; an error never repeats it (it is a secret, and errors are printed). */
function envMetricsToken(env: NodeJS.ProcessEnv): string | null {
  const raw = env.NERKH_METRICS_TOKEN;
  if (raw === undefined || raw === '') return null;
  if (!METRICS_TOKEN.test(raw)) throw new ConfigError('environment: NERKH_METRICS_TOKEN: expected 16 to 256 letters, digits or - . _ ~ + / (then any = padding), as a bearer token is written');
  return raw;
}

function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ConfigError(`config: cannot read ${path}`);
  }
  let json: unknown;
  try {
    json = parseConfigJson(text);
  } catch (error) {
    throw new ConfigError(`config ${path}: invalid JSON at ${(error as Error).message}`);
  }
  return validate(ConfigFileSchema, json, `config ${path}`);
}

/** Check `value` against `schema`; the error names the first offending field, and for a choice the choices. */
export function validate<T extends TSchema>(schema: T, value: unknown, label: string): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>;
  const first = firstProblem(schema, value);
  // "/sources/0/max_age_seconds" → "sources[0].max_age_seconds"
  const field = first?.path ? first.path.slice(1).replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.') : '';
  throw new ConfigError(`${label}: ${field || '(root)'}: ${first?.message ?? 'invalid'}`);
}

function sourceFromFile(source: Static<typeof SourceSchema>, index: number, base: string, zone: ZoneTime): SourceConfig {
  const at = `config: sources[${index}]`;
  if (source.type === 'manual') return manualSource(source, at);
  if (source.type === 'file' && !source.path) throw new ConfigError(`${at}.path: required for a file source`);
  if (source.type === 'http' && !source.url) throw new ConfigError(`${at}.url: required for an http source`);
  if (source.type === 'file' && source.url) throw new ConfigError(`${at}.url: not allowed on a file source`);
  if (source.type === 'http' && source.path) throw new ConfigError(`${at}.path: not allowed on an http source`);
  for (const field of ['follow_redirects', 'allow_insecure'] as const) {
    if (source.type === 'file' && source[field] !== undefined) throw new ConfigError(`${at}.${field}: not allowed on a file source`);
  }
  const refusal = source.url === undefined ? null : addressRefusal(source.url, source.allow_insecure ?? false);
  if (refusal) throw new ConfigError(`${at}.url: source "${source.name}": ${refusal}`);
  const pollSeconds = source.poll_seconds ?? (source.type === 'file' ? 1 : 10);
  const config: SourceConfig = {
    name: source.name,
    type: source.type,
    path: source.path ? resolve(base, source.path) : undefined,
    url: source.url,
    max_age_seconds: source.max_age_seconds ?? 300,
    poll_seconds: pollSeconds,
    timeout_seconds: source.timeout_seconds ?? 5,
    max_bytes: source.max_bytes ?? DEFAULT_MAX_BYTES,
    clock_skew_seconds: source.clock_skew_seconds ?? DEFAULT_CLOCK_SKEW_MS / 1000,
    format: sourceFormat(source, at, zone),
  };
  if (source.type === 'http') {
    config.follow_redirects = source.follow_redirects ?? false;
    config.allow_insecure = source.allow_insecure ?? false;
    config.max_backoff_seconds = httpBackoff(source.max_backoff_seconds, pollSeconds, at);
  } else if (source.max_backoff_seconds !== undefined) throw new ConfigError(`${at}.max_backoff_seconds: not allowed on a file source (a file is watched, never backed off)`);
  return config;
}

/** What a manual source may set: its prices come from `nerkh prices set`, nothing is read or fetched. */
const MANUAL_FIELDS = new Set(['name', 'type', 'max_age_seconds']);
/** How often the ingest leader looks whether a manual price changed (a change notice makes it look at once). */
export const MANUAL_POLL_SECONDS = 0.5;

/**
 * A manual source: prices an operator sets, kept in the store. A price is
 * fresh from when it was set until its expiry (`--expires`), or for
 * `max_age_seconds` when that is set; without either it stays fresh until it
 * is cleared or set again.
 */
function manualSource(source: Static<typeof SourceSchema>, at: string): SourceConfig {
  for (const field of Object.keys(source)) {
    if (!MANUAL_FIELDS.has(field)) throw new ConfigError(`${at}.${field}: not allowed on a manual source (its prices are set with \`nerkh prices set\`)`);
  }
  return { name: source.name, type: 'manual', max_age_seconds: source.max_age_seconds ?? Infinity, poll_seconds: MANUAL_POLL_SECONDS, timeout_seconds: 5 };
}

/** How the source's document is read, compiled once: a bad JSONPath, scale or ECB item stops the start, naming the source and the item. */
function sourceFormat(source: Static<typeof SourceSchema>, at: string, zone: ZoneTime) {
  try {
    return compileFormat(source, zone);
  } catch (error) {
    if (error instanceof FormatConfigError) throw new ConfigError(`${at}.${error.field}: source "${source.name}": ${error.message}`);
    throw error;
  }
}

/** The longest wait between polls of a failing http source: never below its poll interval. */
function httpBackoff(configured: number | undefined, pollSeconds: number, at: string): number {
  if (configured === undefined) return Math.max(pollSeconds, DEFAULT_MAX_BACKOFF_SECONDS);
  if (configured < pollSeconds) throw new ConfigError(`${at}.max_backoff_seconds: must be at least poll_seconds (${pollSeconds}), got ${configured}`);
  return configured;
}

/** The built-in setup: three demo files kept moving by the demo feeder. */
export function demoSources(dataDir: string): SourceConfig[] {
  return DEMO_SOURCE_NAMES.map((name) => ({
    name,
    type: 'file' as const,
    path: resolve(dataDir, 'demo', `${name}.json`),
    max_age_seconds: 30,
    poll_seconds: 1,
    timeout_seconds: 5,
  }));
}

function envInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(`environment: ${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

/** A factor above 0 and at most 1; 1 unless set. */
function envScale(env: NodeJS.ProcessEnv, name: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 1) throw new ConfigError(`environment: ${name}: expected a number above 0 and at most 1, got "${raw}"`);
  return value;
}

function envPattern(env: NodeJS.ProcessEnv, name: string, fallback: string, pattern: RegExp, expected: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!pattern.test(raw)) throw new ConfigError(`environment: ${name}: expected ${expected}, got "${raw}"`);
  return raw;
}

function envChoice(env: NodeJS.ProcessEnv, name: string, fallback: string, choices: string[]): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!choices.includes(raw)) throw new ConfigError(`environment: ${name}: expected one of ${choices.join(', ')}, got "${raw}"`);
  return raw;
}

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return resolve(from, '..');
  }
}
