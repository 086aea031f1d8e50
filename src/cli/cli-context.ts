import { existsSync } from 'node:fs';
import type { NoticeKind } from '../bus/notices.js';
import { loadReferenceData } from '../config-checks.js';
import { loadConfig, type AppConfig } from '../config.js';
import type { Plan } from '../domain/plan.js';
import { ZoneTime } from '../domain/time.js';
import { redactUrl } from '../store/store-errors.js';
import { sqliteFileIn } from '../store/sqlite-file.js';
import type { Store } from '../store/store.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { UsageError } from './output.js';

/** What an admin command works with: the same config, plans and store as the server. */
export interface CliContext {
  config: AppConfig;
  catalogue: Catalogue;
  plans: Map<string, Plan>;
  store: Store;
  time: ZoneTime;
  /** Note a change the servers must see: announced to every one of them once the command succeeds. */
  changed(kind: NoticeKind): void;
}

/** The config, catalogue and plans, without the store (for commands that read no account). */
export function referenceContext(): Omit<CliContext, 'store' | 'changed'> {
  const config = loadConfig();
  const { catalogue, plans } = loadReferenceData(config);
  return { config, catalogue, plans, time: new ZoneTime(config.timezone) };
}

/**
 * Open the server's store and run `work` against it. Only `serve` creates a
 * database: an admin command run from the wrong directory must not report
 * success against a fresh empty store that the server never reads.
 */
export async function withContext<T>(work: (context: CliContext) => Promise<T>): Promise<T> {
  const reference = referenceContext();
  const { config } = reference;
  if (!config.databaseUrl && !existsSync(sqliteFileIn(config.dataDir))) {
    throw new UsageError(
      `no database at ${sqliteFileIn(config.dataDir)} (data directory from ${config.dataDirOrigin}); run this where the server runs, or set NERKH_DATA_DIR (or NERKH_DATABASE_URL) to the server's; \`nerkh serve\` creates it`,
    );
  }
  // The store's modules (the query builder, the drivers) load only for the commands that open it.
  const { Store } = await import('../store/store.js');
  const store = await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const changes = new Set<NoticeKind>();
  let result: T;
  try {
    result = await work({ ...reference, store, changed: (kind) => changes.add(kind) });
  } finally {
    await store.close();
  }
  // Redis's client loads only when there is a change to announce and a Redis to announce it on.
  if (config.redisUrl && changes.size > 0) await (await import('./announce.js')).announce(config, changes);
  return result;
}

/** Where the commands look: printed by `nerkh --help`, so a wrong directory shows before it bites. */
export function describeSetup(config: AppConfig): string {
  const database = config.databaseUrl ? `PostgreSQL ${redactUrl(config.databaseUrl)} (from NERKH_DATABASE_URL)` : `SQLite ${sqliteFileIn(config.dataDir)}${existsSync(sqliteFileIn(config.dataDir)) ? '' : ' (not created yet: `nerkh serve` creates it)'}`;
  return [
    `config file:    ${config.configPath ?? 'none, the built-in demo setup'} (from ${config.configOrigin})`,
    `data directory: ${config.dataDir} (from ${config.dataDirOrigin})`,
    `database:       ${database}`,
  ].join('\n');
}
