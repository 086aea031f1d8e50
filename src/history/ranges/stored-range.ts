import pg from 'pg';
import type { Candle, Grain } from '../../domain/candle.js';
import { tableOf, type StoreLocation } from '../../store/candle-tables.js';
import { readSqliteRange } from './read-worker.js';

/**
 * Candle reads for a render worker, over connections of its own: the SQLite
 * file read-only (the driver blocks the worker, not the event loop), or one
 * PostgreSQL connection per worker (rows are parsed on the worker too).
 */
export type StoredRange = (grain: Grain, reference: string, from: number, to: number) => Promise<Candle[]>;

/** One connection per worker: a worker renders one answer at a time. */
const WORKER_PG_POOL = { max: 1, connectionTimeoutMillis: 5_000, query_timeout: 15_000, idleTimeoutMillis: 30_000, keepAlive: true };
const pools = new Map<string, pg.Pool>();

type PgRow = { start: string; open: string; high: string; low: string; close: string; points: number; source: string; close_at: string };

export function storedRange(location: StoreLocation): StoredRange {
  if ('sqliteFile' in location) {
    const file = location.sqliteFile;
    return async (grain, reference, from, to) => readSqliteRange(file, tableOf(grain), reference, from, to);
  }
  const key = `${location.databaseUrl}\n${location.schema ?? ''}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new pg.Pool({ connectionString: location.databaseUrl, ...WORKER_PG_POOL, ...(location.schema ? { options: `-c search_path=${location.schema}` } : {}) });
    // A lost idle connection is replaced on the next read; the read that fails reports the store to the event loop.
    pool.on('error', () => {});
    pools.set(key, pool);
  }
  const connected = pool;
  return async (grain, reference, from, to) => {
    // `tableOf` gives the repository's own table names, never a request's text.
    const { rows } = await connected.query<PgRow>(
      `select start, open, high, low, close, points, source, close_at from ${tableOf(grain)} where reference = $1 and start >= $2 and start < $3 order by start`,
      [reference, from, to],
    );
    return rows.map((row) => ({ start: Number(row.start), open: row.open, high: row.high, low: row.low, close: row.close, points: Number(row.points), source: row.source, closeAt: Number(row.close_at) }));
  };
}

/** Close the worker's PostgreSQL connections (its pool is being destroyed). */
export async function closeStoredRanges(): Promise<void> {
  const closing = [...pools.values()].map((pool) => pool.end().catch(() => {}));
  pools.clear();
  await Promise.all(closing);
}
