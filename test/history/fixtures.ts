import { randomInt } from 'node:crypto';
import { NO_DAY_FIELDS, type Rate } from '../../src/domain/rate.js';
import type { ZoneTime } from '../../src/domain/time.js';
import { prepareRate } from '../../src/live/prepare.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import type { StoreOptions } from '../../src/store/db.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';

/** A store of its own: a temp dir for SQLite, a fresh schema for PostgreSQL; `close` removes both. */
export async function openFresh(databaseUrl: string | null, overrides: Partial<StoreOptions> = {}): Promise<{ store: Store; options: StoreOptions; close(): Promise<void> }> {
  const dir = tempDir('nerkh-history-');
  const options: StoreOptions = { databaseUrl, dataDir: dir.path, schema: databaseUrl ? `nerkh_t_hist_${process.pid}_${randomInt(1e9)}` : undefined, ...overrides };
  const store = await Store.open(options);
  return {
    store,
    options,
    async close() {
      try {
        await store.close({ dropSchema: true });
      } finally {
        dir.cleanup();
      }
    },
  };
}

/** What one reference serves in a snapshot: value text, source, the value's own update time. */
export type Served = [value: string, source: string, updatedAt: number];

/** A snapshot serving these values (references not named are absent). */
export function snapshotOf(version: number, builtAt: number, served: Record<string, Served>, time: ZoneTime): Snapshot {
  const rates = new Map<string, PreparedRate>();
  for (const [key, [value, source, updatedAt]] of Object.entries(served)) {
    const rate: Rate = { key, title: key, unit: 'ریال', currency: 'IRR', per: 'unit', source_key: key, value, updated_at: updatedAt, status: 'ok', source, ...NO_DAY_FIELDS };
    rates.set(key, prepareRate(rate, time));
  }
  return { version, builtAt, rates, lastUpdate: builtAt, counts: { ok: rates.size, stale: 0, unavailable: 0 } };
}
