import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { StaticMigrationProvider } from './migrations.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface StoreOptions {
  /** PostgreSQL URL; null for the embedded SQLite file in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  /** PostgreSQL schema to work in (created if missing); lets test runs never collide. */
  schema?: string;
}

// bigint columns hold epoch milliseconds and counters, well inside 2^53.
pg.types.setTypeParser(20, (value: string) => Number(value));

export interface Connection {
  db: Kysely<Database>;
  dialect: Dialect;
  schema?: string;
}

export function connect(options: StoreOptions): Connection {
  if (options.databaseUrl) {
    const schema = options.schema;
    if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
    // Every pooled connection starts in the schema; the schema itself is created in `migrate`.
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 4, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
    return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), dialect: 'postgres', schema };
  }
  mkdirSync(options.dataDir, { recursive: true });
  const database = new Sqlite(join(options.dataDir, 'nerkh.sqlite'));
  // WAL lets the CLI write while the server reads; the busy timeout rides out the other process's writes.
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), dialect: 'sqlite' };
}

export async function migrate(connection: Connection): Promise<void> {
  if (connection.schema) await sql.raw(`create schema if not exists ${connection.schema}`).execute(connection.db);
  // The schema is named: unnamed, Kysely takes its bookkeeping tables in *any* schema of the database as
  // its own (another test run's, or a leftover one), and the migration fails.
  const migrator = new Migrator({ db: connection.db, provider: new StaticMigrationProvider(connection.dialect), migrationTableSchema: connection.schema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`store migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}
