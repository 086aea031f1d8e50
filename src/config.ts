import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { SERVICES } from './domain/plan.js';
import { isValidTimeZone } from './domain/time.js';
import { DEFAULT_MAX_BACKOFF_SECONDS } from './sources/http.js';
import type { SourceConfig } from './sources/monitor.js';

export class ConfigError extends Error {}

const NAME = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

const SourceSchema = Type.Object(
  {
    name: Type.String({ pattern: NAME }),
    type: Type.Union([Type.Literal('file'), Type.Literal('http')]),
    path: Type.Optional(Type.String({ minLength: 1 })),
    url: Type.Optional(Type.String({ pattern: '^https?://' })),
    max_age_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
    poll_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 86_400 })),
    timeout_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 120 })),
    max_backoff_seconds: Type.Optional(Type.Number({ minimum: 0.1, maximum: 86_400 })),
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
  },
  { additionalProperties: false },
);

const ConfigFileSchema = Type.Object(
  {
    sources: Type.Optional(Type.Array(SourceSchema, { minItems: 1 })),
    source_priority: Type.Optional(Type.Record(Type.String({ pattern: NAME }), Type.Array(Type.String({ pattern: NAME }), { minItems: 1 }))),
    catalogue: Type.Optional(Type.String({ minLength: 1 })),
    plans: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,31}$' }), PlanFieldsSchema)),
    timezone: Type.Optional(Type.String({ minLength: 1 })),
    history: Type.Optional(
      Type.Object(
        { minute_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Days one-minute candles are kept; hourly and daily candles are kept forever' })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type PlanFields = Static<typeof PlanFieldsSchema>;

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
  timezone: string;
  history: HistoryConfig;
}

export interface HistoryConfig {
  /** Days one-minute candles are kept (hourly and daily candles are kept forever). */
  minuteDays: number;
}

export const DEFAULT_MINUTE_DAYS = 90;

export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
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

  const sources = file.sources ? file.sources.map((s, i) => sourceFromFile(s, i, base)) : demoSources(dataDir);
  const names = new Set<string>();
  sources.forEach((source, i) => {
    if (names.has(source.name)) throw new ConfigError(`config: sources[${i}].name: duplicate source name "${source.name}"`);
    names.add(source.name);
  });
  for (const [key, listed] of Object.entries(file.source_priority ?? {})) {
    listed.forEach((name, i) => {
      if (!names.has(name)) throw new ConfigError(`config: source_priority.${key}[${i}]: unknown source "${name}"`);
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
    timezone,
    history: { minuteDays: file.history?.minute_days ?? DEFAULT_MINUTE_DAYS },
  };
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
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config ${path}: invalid JSON: ${(error as Error).message}`);
  }
  return validate(ConfigFileSchema, json, `config ${path}`);
}

/** Check `value` against `schema`; the error names the first offending field. */
export function validate<T extends TSchema>(schema: T, value: unknown, label: string): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>;
  const first = Value.Errors(schema, value).First();
  // "/sources/0/max_age_seconds" → "sources[0].max_age_seconds"
  const field = first?.path ? first.path.slice(1).replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.') : '';
  throw new ConfigError(`${label}: ${field || '(root)'}: ${first?.message ?? 'invalid'}`);
}

function sourceFromFile(source: Static<typeof SourceSchema>, index: number, base: string): SourceConfig {
  const at = `config: sources[${index}]`;
  if (source.type === 'file' && !source.path) throw new ConfigError(`${at}.path: required for a file source`);
  if (source.type === 'http' && !source.url) throw new ConfigError(`${at}.url: required for an http source`);
  if (source.type === 'file' && source.url) throw new ConfigError(`${at}.url: not allowed on a file source`);
  if (source.type === 'http' && source.path) throw new ConfigError(`${at}.path: not allowed on an http source`);
  const pollSeconds = source.poll_seconds ?? (source.type === 'file' ? 1 : 10);
  const config: SourceConfig = {
    name: source.name,
    type: source.type,
    path: source.path ? resolve(base, source.path) : undefined,
    url: source.url,
    max_age_seconds: source.max_age_seconds ?? 300,
    poll_seconds: pollSeconds,
    timeout_seconds: source.timeout_seconds ?? 5,
  };
  if (source.type === 'http') config.max_backoff_seconds = httpBackoff(source.max_backoff_seconds, pollSeconds, at);
  else if (source.max_backoff_seconds !== undefined) throw new ConfigError(`${at}.max_backoff_seconds: not allowed on a file source (a file is watched, never backed off)`);
  return config;
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
