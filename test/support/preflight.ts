import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import pg from 'pg';
import { missingServiceLine, SERVICES, type Service } from './services.js';

const PROBE_TIMEOUT_MS = 3000;

/** What the run found of one service: where it is, and why it cannot be used (null when it answers). */
export interface ServiceCheck {
  service: Service;
  url: string;
  /** True when the variable was unset and the local service is assumed. */
  defaulted: boolean;
  problem: string | null;
}

/** A URL with its password hidden, for a line anyone may read. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * Ask each service one question (PostgreSQL `select 1`, Redis `PING`), at
 * the URL its variable names or, unset, the local default. Also checks that
 * `redis-server` can be started: the outage tests run one of their own.
 */
export async function checkServices(env: NodeJS.ProcessEnv): Promise<ServiceCheck[]> {
  const checks = (Object.keys(SERVICES) as Service[]).map((service) => {
    const { variable, localDefault } = SERVICES[service];
    const url = env[variable] || localDefault;
    return { service, url, defaulted: !env[variable], problem: null as string | null };
  });
  await Promise.all(
    checks.map(async (check) => {
      check.problem = await (check.service === 'postgres' ? probePostgres(check.url) : probeRedis(check.url));
    }),
  );
  const redis = checks.find((check) => check.service === 'redis')!;
  if (redis.problem === null) {
    const binary = spawnSync('redis-server', ['--version'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
    if (binary.status !== 0) redis.problem = `redis-server cannot be run (${binary.error?.message ?? binary.stderr.trim()}); the outage tests start one of their own`;
  }
  return checks;
}

/** The one line for a service that cannot be used. */
export function problemLine(check: ServiceCheck): string {
  const { title, variable } = SERVICES[check.service];
  const where = `${title} at ${redact(check.url)}${check.defaulted ? ` (${variable} is unset: the local default)` : ''}`;
  return missingServiceLine(check.service, `${where} cannot be used: ${check.problem}`);
}

async function probePostgres(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return describe(error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function probeRedis(url: string): Promise<string | null> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, commandTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  // The connection's own error (ECONNREFUSED, NOAUTH) says more than the "Connection is closed" a command then gets.
  let cause: unknown = null;
  client.on('error', (error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return describe(cause ?? error);
  } finally {
    client.disconnect();
  }
}

function describe(error: unknown): string {
  const { message, code } = error as { message?: string; code?: string };
  return message || code || String(error);
}
