import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './dialect.js';

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
    '006_usage_error_fold': {
      async up(db: Kysely<unknown>) {
        // The error log folds repeats: one row per (account, service, error, minute) with a count.
        await db.schema.alterTable('usage_errors').addColumn('minute', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('usage_errors').addColumn('count', 'bigint', (c) => c.notNull().defaultTo(1)).execute();
        await sql`update usage_errors set minute = at - at % 60000`.execute(db);
        // Rows already logged one per failure fold into the newest of their minute, which keeps its details.
        await sql`
          update usage_errors set "count" = folded.n
          from (select max(id) as id, count(*) as n from usage_errors group by account_id, service, error, minute having count(*) > 1) as folded
          where usage_errors.id = folded.id`.execute(db);
        await sql`delete from usage_errors where id not in (select max(id) from usage_errors group by account_id, service, error, minute)`.execute(db);
        await db.schema.createIndex('usage_errors_fold').on('usage_errors').columns(['account_id', 'service', 'error', 'minute']).unique().execute();
      },
    },
    '007_webhooks': {
      async up(db: Kysely<unknown>) {
        // An account's endpoints. The secret is what signs every delivery (a shared secret: it must be kept to sign).
        await db.schema
          .createTable('webhook_endpoints')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('rules_json', 'text', (c) => c.notNull())
          .addColumn('events_json', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('failing_since', 'bigint')
          .addColumn('disabled_reason', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').column('account_id').execute();
        // The last evaluated state of each rule (and each reference's staleness) per endpoint: a new leader
        // continues from it, so a crossing is delivered once across a change of leader.
        await db.schema
          .createTable('webhook_alert_states')
          .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('since', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('webhook_alert_states_pk', ['endpoint_id', 'subject'])
          .execute();
        // Deliveries still to make (and, for a week, made): written in the same transaction as the state change.
        await db.schema
          .createTable('webhook_outbox')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('finished_at', 'bigint')
          .execute();
        await db.schema.createIndex('webhook_outbox_due').on('webhook_outbox').columns(['state', 'next_attempt_at']).execute();
        // Every attempt, give-up and disabling, per account: `nerkh webhooks log` and /v1/webhooks.
        await db.schema
          .createTable('webhook_log')
          .addColumn('id', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('endpoint_id', 'text', (c) => c.notNull())
          .addColumn('message_id', 'text')
          .addColumn('type', 'text')
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('attempt', 'integer')
          .addColumn('status_code', 'integer')
          .addColumn('error', 'text')
          .addColumn('duration_ms', 'integer')
          .addColumn('outcome', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('webhook_log_account_at').on('webhook_log').columns(['account_id', 'at']).execute();
        // Row 4: the highest ingest-leader epoch that has written webhook states (see WebhookRepository.claimFence).
        await sql`insert into store_revision (id, revision) values (4, 0)`.execute(db);
      },
    },
    '008_manual_prices': {
      async up(db: Kysely<unknown>) {
        // The prices a manual source serves now, one per (source, reference); values are number text, exactly as set.
        await db.schema
          .createTable('manual_prices')
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('reference', 'text', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('set_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint')
          .addColumn('note', 'text')
          .addPrimaryKeyConstraint('manual_prices_pk', ['source', 'reference'])
          .execute();
        // Every set and clear, never rewritten: who changed what, when, and why.
        await db.schema
          .createTable('manual_price_log')
          .addColumn('id', serial, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('reference', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('value', 'text')
          .addColumn('expires_at', 'bigint')
          .addColumn('note', 'text')
          .addColumn('at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('manual_price_log_reference').on('manual_price_log').columns(['reference', 'id']).execute();
        // Row 5: bumped by every set and clear, so the ingest leader rereads the prices only when they changed.
        await sql`insert into store_revision (id, revision) values (5, 0)`.execute(db);
      },
    },
    '009_webhook_fair_queue': {
      async up(db: Kysely<unknown>) {
        // What a delivery is about (`rule:<rule>`, `stale:<reference>`): a newer event about it replaces an undelivered older one.
        await db.schema.alterTable('webhook_outbox').addColumn('subject', 'text').execute();
        await db.schema.createIndex('webhook_outbox_endpoint').on('webhook_outbox').columns(['endpoint_id', 'state', 'subject']).execute();
        // Per endpoint, the deliveries replaced by newer ones and those dropped over the cap, ever.
        await db.schema.alterTable('webhook_endpoints').addColumn('superseded', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('webhook_endpoints').addColumn('dropped', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        // The log folds repeats as the usage error log does: one row per (endpoint, outcome, minute) with a count.
        await db.schema.alterTable('webhook_log').addColumn('minute', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
        await db.schema.alterTable('webhook_log').addColumn('count', 'bigint', (c) => c.notNull().defaultTo(1)).execute();
        await sql`update webhook_log set minute = at - at % 60000`.execute(db);
        // Lines already logged one per attempt fold into the newest of their minute, which keeps its details.
        await sql`
          update webhook_log set "count" = folded.n
          from (select max(id) as id, count(*) as n from webhook_log group by endpoint_id, outcome, minute having count(*) > 1) as folded
          where webhook_log.id = folded.id`.execute(db);
        await sql`delete from webhook_log where id not in (select max(id) from webhook_log group by endpoint_id, outcome, minute)`.execute(db);
        await db.schema.createIndex('webhook_log_fold').on('webhook_log').columns(['endpoint_id', 'outcome', 'minute']).unique().execute();
      },
    },
    '010_usage_hourly': {
      async up(db: Kysely<unknown>) {
        // Requests per account and hour in the zone (navasan's hourly_usage); rows older than two days are pruned.
        await db.schema
          .createTable('usage_hourly')
          .addColumn('account_id', 'text', (c) => c.notNull())
          .addColumn('hour', 'text', (c) => c.notNull())
          .addColumn('requests', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('usage_hourly_pk', ['account_id', 'hour'])
          .execute();
      },
    },
    '011_market_calendar': {
      async up(db: Kysely<unknown>) {
        // What operators declared per market and local day: a closure (with its reason) or an opening; one row a day, the latest wins.
        await db.schema
          .createTable('market_calendar')
          .addColumn('market', 'text', (c) => c.notNull())
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('reason', 'text')
          .addColumn('set_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('market_calendar_pk', ['market', 'day'])
          .execute();
        // Row 6: bumped by every change, so every node rereads the declarations only when they changed.
        await sql`insert into store_revision (id, revision) values (6, 0)`.execute(db);
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
