import { mkdirSync } from 'node:fs';
import type { Candle } from '../domain/candle.js';
import Sqlite from 'better-sqlite3';
import { Kysely, Migrator, sql, SqliteDialect } from 'kysely';
import { createRequire } from 'node:module';
import type PgDriver from 'pg';
import { StaticMigrationProvider } from './migrations.js';
import { OneSchemaPostgresDialect } from './one-schema-introspector.js';
import type { Dialect } from './dialect.js';
import type { Database } from './tables.js';
import { sqliteFileIn } from './sqlite-file.js';

export { sqliteFileIn };

export interface StoreOptions {
  /** PostgreSQL URL; null for the embedded SQLite file in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  /** PostgreSQL schema to work in (created if missing); lets test runs never collide. */
  schema?: string;
  /**
   * How long an SQLite write waits for another process's write lock. The
   * driver is synchronous, so in the server this blocks every request: keep
   * it short there (a CLI change holds the lock for milliseconds).
   */
  sqliteBusyTimeoutMs?: number;
  /**
   * Read SQLite history ranges and `?at=` candles in worker threads made by
   * this (`sqliteRangeThreads`, src/history/ranges/read-threads.ts), and let
   * history answers be rendered in worker threads that read either dialect
   * themselves (the server: a long read or render on the event loop would
   * hold every request). A CLI command reads on its own thread and starts none.
   */
  rangeThreads?: (sqliteFile: string) => RangeReads;
}

/**
 * SQLite writes in the server wait this long for another process's write
 * lock; the driver blocks the event loop meanwhile. A CLI change holds the
 * lock for milliseconds and an import's transaction writes for a few: this
 * is enough for either even when that process is descheduled on a busy host.
 */
export const SERVER_SQLITE_BUSY_MS = 200;

/**
 * How a bulk writer (the history import) shares SQLite's one write lock with
 * a server: transactions of about `transactionMs`, the lock left free
 * `pauseMs` after each that wrote. A waiting server write retries after 1, 2,
 * 5, 10, 15, 20 and 25 ms: a pause longer than those gaps lets it in.
 */
export const SQLITE_BULK_PACING = { transactionMs: 20, pauseMs: 25 };

/** Pool settings: a dead or blackholed server must fail a query in seconds, never hang it. */
const PG_POOL = { max: 4, connectionTimeoutMillis: 5_000, query_timeout: 15_000, idleTimeoutMillis: 30_000, keepAlive: true };

let pgDriver: typeof PgDriver | null = null;

/** The PostgreSQL driver, loaded on first use: an SQLite store, and every admin command on one, never needs it. */
function postgres(): typeof PgDriver {
  if (pgDriver === null) {
    pgDriver = createRequire(import.meta.url)('pg') as typeof PgDriver;
    // bigint columns hold epoch milliseconds and counters, well inside 2^53.
    pgDriver.types.setTypeParser(20, (value: string) => Number(value));
  }
  return pgDriver;
}

export interface Connection {
  db: Kysely<Database>;
  dialect: Dialect;
  schema?: string;
  /** The SQLite file, for checks that it is still the one opened. */
  sqliteFile?: string;
  /** The SQLite handle itself, for the few hot statements that are prepared once (history writes and range reads). */
  sqlite?: Sqlite.Database;
}

/**
 * Open a connection (a pool for PostgreSQL). `onConnectionLost` hears about
 * pooled connections that die (a restart, a failover, `pg_terminate_backend`,
 * a proxy's timeout): the pool drops them and opens new ones on demand, and
 * without a listener Node would end the process.
 */
export function connect(options: StoreOptions, onConnectionLost: (error: Error) => void = () => {}): Connection {
  if (options.databaseUrl) {
    const schema = options.schema;
    if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
    // Every pooled connection starts in the schema; the schema itself is created in `migrate`.
    const pool = new (postgres().Pool)({ connectionString: options.databaseUrl, ...PG_POOL, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
    pool.on('error', onConnectionLost);
    // A client checked out between two queries (inside a transaction, say) has no pool listener:
    // give each its own for life. Its queries fail on their own; the pool drops it on release.
    pool.on('connect', (client) => client.on('error', onConnectionLost));
    return { db: new Kysely<Database>({ dialect: new OneSchemaPostgresDialect({ pool }, schema) }), dialect: 'postgres', schema };
  }
  mkdirSync(options.dataDir, { recursive: true });
  const file = sqliteFileIn(options.dataDir);
  const database = new Sqlite(file);
  // WAL lets the CLI write while the server reads; the busy timeout rides out the other process's writes.
  database.pragma('journal_mode = WAL');
  database.pragma(`busy_timeout = ${options.sqliteBusyTimeoutMs ?? 5000}`);
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), dialect: 'sqlite', sqliteFile: file, sqlite: database };
}

export async function migrate(connection: Connection): Promise<void> {
  if (connection.schema) await sql.raw(`create schema if not exists ${connection.schema}`).execute(connection.db);
  // Name the schema: Kysely otherwise looks for its own tables by name in every schema and can see another run's.
  const migrator = new Migrator({ db: connection.db, provider: new StaticMigrationProvider(connection.dialect), ...(connection.schema ? { migrationTableSchema: connection.schema } : {}) });
  // Kysely looks for its migration table in the store's schema alone (OneSchemaPostgresDialect): a schema
  // another store drops meanwhile can no longer fail the listing.
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`store migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`, { cause: error });
  }
}

/**
 * SQLite range reads done off this thread: the server's read threads
 * (src/history/ranges/read-threads.ts), given to the store as it opens
 * (`rangeThreads`), since the synchronous driver would otherwise hold the
 * event loop for the whole read.
 */
export interface RangeReads {
  read(table: string, reference: string, from: number, to: number): Promise<Candle[]>;
  /** The last candle starting at or before `at` (`?at=`). */
  lastAtOrBefore(table: string, reference: string, at: number): Promise<Candle | null>;
  close(): Promise<void>;
}


