import type { AppConfig } from '../config.js';
import type { ZoneTime } from '../domain/time.js';
import type { Logger } from '../log.js';
import { SERVER_SQLITE_BUSY_MS } from '../store/db.js';
import { StoreUnavailableError } from '../store/errors.js';
import { sqliteRangeThreads } from '../history/ranges/read-threads.js';
import { Store } from '../store/store.js';

/** How long a start waits between two attempts to reach the database. */
const RETRY_MS = 1000;

export interface WaitForStoreOptions {
  /** PostgreSQL schema to work in. */
  schema?: string;
  /** How long to wait for an unreachable database before giving up; 0: not at all. */
  storeWaitMs?: number;
}

/**
 * Open the store, waiting up to `storeWaitMs` for a database that is still
 * starting (a compose stack brings PostgreSQL up beside the service): one
 * log line per attempt, then the last error, as one line.
 */
export async function openStoreWaiting(config: AppConfig, options: WaitForStoreOptions, time: ZoneTime, logger: Logger): Promise<Store> {
  const deadline = time.now() + (options.storeWaitMs ?? 0);
  for (;;) {
    try {
      return await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: options.schema, sqliteBusyTimeoutMs: SERVER_SQLITE_BUSY_MS, rangeThreads: sqliteRangeThreads }, time.now());
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || time.now() >= deadline) throw error;
      logger.warn({ part: 'store', reason: error.reason }, 'waiting for the database');
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
