import { sql, type Kysely } from 'kysely';
import type { Database, UsageDailyTable, UsageErrorsTable } from './schema.js';

/** One row of daily counts: per account, key, day and service. */
export type UsageCount = UsageDailyTable;

/** One entry of an account's error log. */
export type UsageErrorEntry = Omit<UsageErrorsTable, 'id'>;

export const ERROR_LOG_LIMIT = 1000;
export const ERROR_LOG_DAYS = 30;

/** Usage counters and the error log; written in batches by the meter, read by reports. */
export class UsageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Add counts and append errors, in one transaction: a batch lands whole or
   * not at all. With a `batchId` it lands at most once: a batch whose write
   * failed ambiguously (the connection dropped around the commit) can be sent
   * again safely. Returns false when that batch had already landed.
   */
  async record(counts: UsageCount[], errors: UsageErrorEntry[], batchId?: string, now = Date.now()): Promise<boolean> {
    if (counts.length === 0 && errors.length === 0) return true;
    return this.db.transaction().execute(async (trx) => {
      if (batchId !== undefined) {
        const inserted = await trx.insertInto('usage_batches').values({ id: batchId, applied_at: now }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return false;
      }
      for (let i = 0; i < counts.length; i += 200) {
        await trx
          .insertInto('usage_daily')
          .values(counts.slice(i, i + 200))
          .onConflict((oc) =>
            oc.columns(['account_id', 'key_id', 'day', 'service']).doUpdateSet({
              ok: sql`usage_daily.ok + excluded.ok`,
              errors: sql`usage_daily.errors + excluded.errors`,
            }),
          )
          .execute();
      }
      for (let i = 0; i < errors.length; i += 200) await trx.insertInto('usage_errors').values(errors.slice(i, i + 200)).execute();
      return true;
    });
  }

  /** Forget batch ids older than a day: a retry comes within seconds. */
  async pruneBatches(now: number): Promise<void> {
    await this.db.deleteFrom('usage_batches').where('applied_at', '<', now - 86_400_000).execute();
  }

  /** Keep the error log to the last 1,000 entries per account and 30 days. */
  async pruneErrors(accountIds: Iterable<string>, now: number): Promise<void> {
    const oldest = now - ERROR_LOG_DAYS * 86_400_000;
    await this.db.deleteFrom('usage_errors').where('at', '<', oldest).execute();
    for (const accountId of accountIds) {
      const cutoff = await this.db
        .selectFrom('usage_errors')
        .select('id')
        .where('account_id', '=', accountId)
        .orderBy('id', 'desc')
        .offset(ERROR_LOG_LIMIT)
        .limit(1)
        .executeTakeFirst();
      if (cutoff) await this.db.deleteFrom('usage_errors').where('account_id', '=', accountId).where('id', '<=', cutoff.id).execute();
    }
  }

  /** Per day and service, summed over the account's keys, for days ≥ `fromDay` (YYYY-MM-DD). */
  async daily(accountId: string, fromDay: string): Promise<{ day: string; service: string; ok: number; errors: number }[]> {
    const rows = await this.db
      .selectFrom('usage_daily')
      .select(['day', 'service', (eb) => eb.fn.sum<number>('ok').as('ok'), (eb) => eb.fn.sum<number>('errors').as('errors')])
      .where('account_id', '=', accountId)
      .where('day', '>=', fromDay)
      .groupBy(['day', 'service'])
      .orderBy('day')
      .execute();
    return rows.map((row) => ({ day: row.day, service: row.service, ok: Number(row.ok), errors: Number(row.errors) }));
  }

  /** Newest first. */
  async errors(accountId: string, since: number, limit = ERROR_LOG_LIMIT): Promise<UsageErrorEntry[]> {
    const rows = await this.db
      .selectFrom('usage_errors')
      .select(['account_id', 'key_id', 'at', 'service', 'path', 'http_status', 'error'])
      .where('account_id', '=', accountId)
      .where('at', '>=', since)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...row, at: Number(row.at), http_status: Number(row.http_status) }));
  }

  /** Every request counted for an account (all keys, all days): what tests compare with requests served. */
  async total(accountId: string): Promise<{ ok: number; errors: number }> {
    const row = await this.db
      .selectFrom('usage_daily')
      .select([(eb) => eb.fn.sum<number>('ok').as('ok'), (eb) => eb.fn.sum<number>('errors').as('errors')])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return { ok: Number(row?.ok ?? 0), errors: Number(row?.errors ?? 0) };
  }
}
