import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './db.js';

/**
 * Schema changes, in order; one list for every dialect. Kysely records what
 * ran in its own table, so a store is migrated exactly once per step.
 */
export function migrations(dialect: Dialect): Record<string, Migration> {
  // PostgreSQL needs an identity column spelled its own way; everything else is shared.
  const serial = dialect === 'postgres' ? 'bigserial' : 'integer';
  return {
    '001_accounts_and_keys': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('accounts')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('username', 'text', (c) => c.notNull().unique())
          .addColumn('plan', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('references_json', 'text')
          .addColumn('origins_json', 'text')
          .addColumn('overrides_json', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('api_keys')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('hash', 'text', (c) => c.notNull().unique())
          .addColumn('label', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint')
          .addColumn('revoked_at', 'bigint')
          .addColumn('last_used_at', 'bigint')
          .execute();
        await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();
        await db.schema
          .createTable('store_revision')
          .addColumn('id', 'integer', (c) => c.primaryKey())
          .addColumn('revision', 'bigint', (c) => c.notNull())
          .execute();
        await sql`insert into store_revision (id, revision) values (1, 0)`.execute(db);
      },
    },
    '002_usage': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('usage_daily')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('service', 'text', (c) => c.notNull())
          .addColumn('ok', 'bigint', (c) => c.notNull())
          .addColumn('errors', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'key_id', 'day', 'service'])
          .execute();
        await db.schema
          .createTable('usage_errors')
          .addColumn('id', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('service', 'text', (c) => c.notNull())
          .addColumn('path', 'text', (c) => c.notNull())
          .addColumn('http_status', 'integer', (c) => c.notNull())
          .addColumn('error', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('usage_errors_account_at').on('usage_errors').columns(['account_id', 'at']).execute();
      },
    },
    '003_usage_batches': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('usage_batches')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('applied_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('usage_batches_applied_at').on('usage_batches').column('applied_at').execute();
      },
    },
    '004_history': {
      async up(db: Kysely<unknown>) {
        // One table per grain, keyed by (reference, start): a range read is one index range.
        // Values are the served number text, exactly (TEXT in both dialects: NUMERIC would
        // rewrite `1e3` and `1.50`); they are compared as decimals in code, never in SQL.
        for (const table of ['history_minute', 'history_hour', 'history_day']) {
          let create = db.schema
            .createTable(table)
            .addColumn('reference', 'text', (c) => c.notNull())
            .addColumn('start', 'bigint', (c) => c.notNull())
            .addColumn('open', 'text', (c) => c.notNull())
            .addColumn('high', 'text', (c) => c.notNull())
            .addColumn('low', 'text', (c) => c.notNull())
            .addColumn('close', 'text', (c) => c.notNull())
            .addColumn('points', 'integer', (c) => c.notNull())
            .addColumn('source', 'text', (c) => c.notNull())
            .addColumn('close_at', 'bigint', (c) => c.notNull())
            .addPrimaryKeyConstraint(`${table}_pk`, ['reference', 'start']);
          // SQLite stores such a table in key order itself, with no separate rowid tree.
          if (dialect === 'sqlite') create = create.modifyEnd(sql`without rowid`);
          await create.execute();
          // By time alone: retention deletes and the rows of one instant across references.
          await db.schema.createIndex(`${table}_start`).on(table).column('start').execute();
        }
        // Row 2 of the revision counter: bumped when the settled past changes, so readers drop their caches.
        await sql`insert into store_revision (id, revision) values (2, 0)`.execute(db);
      },
    },
    '005_history_fence': {
      async up(db: Kysely<unknown>) {
        // Row 3: the highest ingest-leader epoch that has written candles (see HistoryRepository.write).
        await sql`insert into store_revision (id, revision) values (3, 0)`.execute(db);
      },
    },
  };
}

export class StaticMigrationProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations(this.dialect);
  }
}
