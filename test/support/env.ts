import { mkdtempSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, type AppConfig } from '../../src/config.js';
import { DEFAULT_MARKET_SPECS, withoutClosures } from '../../src/domain/market-specs.js';
import type { SourceConfig } from '../../src/sources/monitor.js';
import { describeReadError } from '../../src/sources/reader.js';
import { generous, HANG_MS } from './deadline.js';

/** A fresh folder under the system temp dir, removed by `cleanup`. */
export function tempDir(prefix = 'nerkh-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** Write a source document atomically, as a well-behaved feeder would. */
export function writeSource(path: string, items: Record<string, number | { value: number; updated_at?: string }>, updatedAt: Date | string | null = new Date()): void {
  const doc: Record<string, unknown> = { items };
  if (updatedAt !== null) doc.updated_at = typeof updatedAt === 'string' ? updatedAt : updatedAt.toISOString();
  writeRaw(path, JSON.stringify(doc));
}

export function writeRaw(path: string, text: string): void {
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

export function fileSources(dir: string, names: string[], maxAgeSeconds = 300): SourceConfig[] {
  mkdirSync(dir, { recursive: true });
  return names.map((name) => ({ name, type: 'file', path: join(dir, `${name}.json`), max_age_seconds: maxAgeSeconds, poll_seconds: 0.2, timeout_seconds: 5 }));
}

/** A full config as `loadConfig` would build it, for tests that assemble the runtime in process. */
export function testConfig(dataDir: string, overrides: Partial<AppConfig> = {}): AppConfig {
  return {
    port: 0,
    host: '127.0.0.1',
    dataDir,
    dataDirOrigin: 'NERKH_DATA_DIR',
    databaseUrl: null,
    redisUrl: null,
    redisPrefix: 'nerkh:',
    logLevel: 'silent',
    configPath: null,
    configOrigin: 'built-in demo',
    demo: false,
    sources: fileSources(join(dataDir, 'sources'), ['alpha', 'beta']),
    sourcePriority: {},
    cataloguePath: BUNDLED_CATALOGUE,
    plans: {},
    screening: {},
    timezone: 'Asia/Tehran',
    history: { minuteDays: 90 },
    // The built-in markets without their calendars: a test's staleness never depends on the day it runs (tests of the calendar give one, with a clock).
    markets: withoutClosures(DEFAULT_MARKET_SPECS),
    webhooks: { allowPrivate: false, timeScale: 1 },
    shedAfterLagMs: 250,
    shedAtBusyPercent: 90,
    clockShiftMs: 0,
    frameAncestors: "'none'",
    metricsToken: null,
    ...overrides,
  };
}

/** Poll `check` until it returns a truthy value, giving up after `timeoutMs` or HANG_MS, whichever is longer. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = HANG_MS, intervalMs = 50): Promise<T> {
  timeoutMs = generous(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * The bundled catalogue with its sanity bands taken off: for tests about
 * failover, digits and the wire, whose toy values (1001, 18 digits) are not
 * plausible prices. The bands have tests of their own.
 */
export function catalogueWithoutBands(): Catalogue {
  const bundled = loadCatalogue(BUNDLED_CATALOGUE);
  return new Catalogue(
    bundled.references.map((reference) => ({ ...reference, min: null, max: null })),
    [...bundled.popular],
  );
}

/** The reason a source read fails with, as the status page shows it; throws when the read succeeds. */
export async function readFailure(reader: { readIfChanged(): Promise<unknown> }): Promise<string> {
  try {
    await reader.readIfChanged();
  } catch (error) {
    return describeReadError(error);
  }
  throw new Error('the read did not fail');
}
