import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppConfig } from '../../src/config.js';
import { startRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/wiring.js';
import { hashKey } from '../../src/domain/key-material.js';
import type { Store } from '../../src/store/store.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { catalogueWithoutBands, eventually, tempDir, testConfig, writeSource } from './env.js';
import { needs, POSTGRES_URL } from './services.js';

/** Source keys of a few well-known references, as the bundled catalogue has them. */
export const SAMPLE = {
  usd_free: 'ir_fx_free_usd',
  coin_emami: 'ir_coin_emami',
  gold_18k: 'ir_gold_18k_gram',
  gold_ounce: 'intl_xau_usd_spot',
  eur_free: 'ir_fx_free_eur',
} as const;

/** Plausible levels (inside each reference's sanity band): source alpha writes each + 1, beta + 2. */
export const SAMPLE_VALUES: Record<keyof typeof SAMPLE, number> = {
  usd_free: 1_000_000,
  coin_emami: 1_000_000_000,
  gold_18k: 100_000_000,
  gold_ounce: 4000,
  eur_free: 1_200_000,
};

export interface Harness {
  app: FastifyInstance;
  store: Store;
  runtime: Runtime;
  dataDir: string;
  config: AppConfig;
  /** Create an account (plan, optional overrides) and return a fresh key for it, live in the directory. */
  keyFor(username: string, plan?: string, changes?: Parameters<Store['accounts']['update']>[1]): Promise<{ key: string; id: string; accountId: string }>;
  close(): Promise<void>;
}

/** Thresholds no test reaches: the loop lagging 10 s, or more than fully used. */
const NO_SHEDDING = { maxEventLoopDelayMs: 10_000, maxEventLoopUtilization: 1.1 };

export interface HarnessOptions {
  config?: Partial<AppConfig>;
  /** A PostgreSQL URL; each harness gets its own schema. */
  databaseUrl?: string | null;
  /** Serve the bundled catalogue without its sanity bands: for tests whose values are about digits, not prices. */
  withoutBands?: boolean;
  /** Passed on to the runtime (a logger to read, lower overload thresholds). */
  runtime?: Omit<RuntimeOptions, 'schema'>;
}

/**
 * The real service assembled in process: real SQLite (or PostgreSQL) store,
 * real source files, real snapshots. Tests talk to it through `app.inject`.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = tempDir();
  const config = testConfig(dir.path, { ...(options.withoutBands ? { cataloguePath: writeCatalogueWithoutBands(dir.path) } : {}), ...options.config });
  for (const source of config.sources) {
    if (source.type === 'file') {
      writeSource(source.path!, Object.fromEntries(Object.entries(SAMPLE).map(([key, sourceKey]) => [sourceKey, SAMPLE_VALUES[key as keyof typeof SAMPLE] + (source.name === 'alpha' ? 1 : 2)])));
    }
  }
  const schema = options.databaseUrl ? `nerkh_t_${process.pid}_${Math.floor(Math.random() * 1e9)}` : undefined;
  // The test drives the server from its own event loop, so a busy test saturates the loop it measures: load shedding is
  // off unless a test sets its thresholds (the shedding tests do), or a suite's own requests would be shed as the costliest.
  const loadShedding = options.runtime?.loadShedding ?? NO_SHEDDING;
  const runtime = await startRuntime({ ...config, databaseUrl: options.databaseUrl ?? null }, { ...options.runtime, loadShedding, schema });
  const store = runtime.store;
  return {
    app: runtime.app,
    store,
    runtime,
    dataDir: dir.path,
    config,
    async keyFor(username, plan = 'enterprise', changes) {
      const account = await store.accounts.create(username, plan);
      if (changes) await store.accounts.update(username, changes);
      const issued = await store.keys.issue(account.id);
      await eventually(async () => {
        await runtime.directory!.poll();
        return runtime.directory!.lookup(hashKey(issued.key));
      }, 3000);
      return { key: issued.key, id: issued.id, accountId: account.id };
    },
    async close() {
      await runtime.close({ dropSchema: schema !== undefined });
      dir.cleanup();
    },
  };
}

export interface Dialect {
  name: string;
  databaseUrl: string | null;
  /** Options for the dialect's `describe`: PostgreSQL follows the service rule (test/support/services.ts). */
  options: { skip: string | false };
}

/**
 * The dialects a store-backed suite runs against: SQLite and PostgreSQL. A
 * missing PostgreSQL fails the file, unless NERKH_TEST_SKIP_SERVICES=1 (then
 * its suite is reported skipped rather than left out).
 */
export function dialects(): Dialect[] {
  return [
    { name: 'sqlite', databaseUrl: null, options: { skip: false } },
    { name: 'postgres', databaseUrl: POSTGRES_URL, options: needs('postgres') },
  ];
}

export function json(response: { body: string }): Record<string, unknown> {
  return JSON.parse(response.body) as Record<string, unknown>;
}

export { join };

/** The bundled catalogue, bands removed, written as a catalogue folder under `dir` (popularity order kept); returns its path. */
function writeCatalogueWithoutBands(dir: string): string {
  const path = join(dir, 'catalogue-without-bands');
  const catalogue = catalogueWithoutBands();
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, 'references.json'), JSON.stringify(catalogue.references.map(({ min: _min, max: _max, ...reference }) => reference)));
  writeFileSync(join(path, 'popular.json'), JSON.stringify(catalogue.popular));
  return path;
}
