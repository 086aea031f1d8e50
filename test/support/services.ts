/**
 * The rule for tests that need a real service (PostgreSQL, Redis): a missing
 * one fails the run loudly, naming the variable to set. Only an explicit
 * `NERKH_TEST_SKIP_SERVICES=1` turns that into a skip, which `npm test`
 * (test/run.ts) then counts and reports. A suite that quietly skipped would
 * pass on a machine that never ran it.
 */

export type Service = 'postgres' | 'redis';

export interface ServiceInfo {
  /** The variable a test run reads the service's address from. */
  variable: string;
  /** What `npm test` uses when the variable is unset: the local service. */
  localDefault: string;
  title: string;
}

export const SERVICES: Record<Service, ServiceInfo> = {
  postgres: { variable: 'NERKH_TEST_DATABASE_URL', localDefault: 'postgres://postgres@127.0.0.1:5432/test', title: 'PostgreSQL' },
  redis: { variable: 'NERKH_TEST_REDIS_URL', localDefault: 'redis://127.0.0.1:6379', title: 'Redis' },
};

/** The opt-out: tests needing an absent service are skipped (and counted) instead of failing the run. */
export const SKIP_SERVICES_VARIABLE = 'NERKH_TEST_SKIP_SERVICES';


export const POSTGRES_URL = process.env[SERVICES.postgres.variable] || null;
export const REDIS_URL = process.env[SERVICES.redis.variable] || null;

export function skippingServices(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SKIP_SERVICES_VARIABLE] === '1';
}

/** The one line that says what is missing and how to provide it; `problem` replaces "<variable> is not set". */
export function missingServiceLine(service: Service, problem?: string): string {
  const { variable, localDefault, title } = SERVICES[service];
  return `${problem ?? `${variable} is not set`}: run \`export ${variable}=${localDefault}\` with the URL of a running ${title}, or set ${SKIP_SERVICES_VARIABLE}=1 to skip the tests that need it`;
}

export class MissingServiceError extends Error {
  override name = 'MissingServiceError';
}

/**
 * Options for a `describe` or `it` that needs these services. Every one set:
 * run. One missing: throw (the file fails with the line that says what to
 * export), or with `NERKH_TEST_SKIP_SERVICES=1` skip, with a reason the run counts.
 */
export function needs(...services: Service[]): { skip: string | false } {
  const missing = services.filter((service) => !process.env[SERVICES[service].variable]);
  if (missing.length === 0) return { skip: false };
  if (!skippingServices()) throw new MissingServiceError(missing.map((service) => missingServiceLine(service)).join('\n'));
  // The reason names the opt-out: that is how the run's skip count (skip-reporter.mjs) knows it.
  return { skip: `needs ${missing.map((service) => SERVICES[service].title).join(' and ')} (${SKIP_SERVICES_VARIABLE}=1)` };
}
