import { detached } from '../domain/cache-size.js';
import { sql, type Kysely } from 'kysely';
import type { UsageHourlyTable, Database, UsageDailyTable, UsageErrorsTable } from './tables.js';

/** One row of daily counts: per account, key, day and service. */
export type UsageCount = UsageDailyTable;
export type UsageHour = UsageHourlyTable;
/** Hourly counts are kept this long: today's hour and yesterday's are all they answer. */
export const HOURLY_KEEP_MS = 2 * 86_400_000;

/** One entry of an account's error log; its minute is that of `at`. */
export type UsageErrorEntry = Omit<UsageErrorsTable, 'id' | 'minute'>;

export const ERROR_LOG_LIMIT = 1000;
export const ERROR_LOG_DAYS = 30;
const MINUTE_MS = 60_000;
export const MAX_PATH = 500;

/** The start of the minute an error at `at` is folded into. */
export function minuteOf(at: number): number {
  return at - (at % MINUTE_MS);
}

/** What one entry folds by: account, service, error code and minute. */
export function foldKey(accountId: string, service: string, error: string, minute: number): string {
  return `${accountId}\u0000${service}\u0000${error}\u0000${minute}`;
}

/** Add `count` failures to `into`: the counts add up, the later failure's details stand (paths cut to 500 characters). */
export function foldInto(into: UsageErrorEntry, keyId: string, at: number, path: string, httpStatus: number, count: number): void {
  into.count += count;
  if (at < into.at) return;
  into.at = at;
  into.key_id = keyId;
  into.path = path.length > MAX_PATH ? detached(path.slice(0, MAX_PATH)) : path;
  into.http_status = httpStatus;
}

/** The later of two values of one column, by `at`, when an entry folds into the stored row. */
const latest = <T>(column: string) => sql.raw<T>(`case when excluded.at >= usage_errors.at then excluded.${column} else usage_errors.${column} end`);

/** Usage counters and the error log; written in batches by the meter, read by reports. */
export class UsageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Add counts and error-log entries, in one transaction: a batch lands whole or
   * not at all. An entry whose (account, service, error, minute) is stored
   * already adds its count to that row (another node, or an earlier write of
   * this one, folded the same minute). With a `batchId` it lands at most once: a batch whose write
   * failed ambiguously (the connection dropped around the commit) can be sent
   * again safely. Returns false when that batch had already landed.
   */
  async record(counts: UsageCount[], errors: UsageErrorEntry[], batchId?: string, now = Date.now(), hours: UsageHour[] = []): Promise<boolean> {
    if (counts.length === 0 && errors.length === 0 && hours.length === 0) return true;
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
      for (let i = 0; i < hours.length; i += 200) {
        await trx
          .insertInto('usage_hourly')
          .values(hours.slice(i, i + 200))
          .onConflict((oc) => oc.columns(['account_id', 'hour']).doUpdateSet({ requests: sql`usage_hourly.requests + excluded.requests` }))
          .execute();
      }
      // One row per fold key within a statement: PostgreSQL refuses to update a row twice in one upsert.
      const rows = foldErrors(errors).map((entry) => ({ ...entry, minute: minuteOf(entry.at) }));
      for (let i = 0; i < rows.length; i += 200) {
        await trx
          .insertInto('usage_errors')
          .values(rows.slice(i, i + 200))
          .onConflict((oc) =>
            oc.columns(['account_id', 'service', 'error', 'minute']).doUpdateSet({
              count: sql`usage_errors."count" + excluded."count"`,
              at: latest<number>('at'),
              key_id: latest<string>('key_id'),
              path: latest<string>('path'),
              http_status: latest<number>('http_status'),
            }),
          )
          .execute();
      }
      return true;
    });
  }

  /** Forget hourly counts older than HOURLY_KEEP_MS (`hour` is the zone's `YYYY-MM-DDTHH`, compared as text). */
  async pruneHourly(oldestHour: string): Promise<void> {
    await this.db.deleteFrom('usage_hourly').where('hour', '<', oldestHour).execute();
  }

  /** An account's requests in one hour (`YYYY-MM-DDTHH` in the zone), all keys. */
  async hourly(accountId: string, hour: string): Promise<number> {
    const row = await this.db.selectFrom('usage_hourly').select('requests').where('account_id', '=', accountId).where('hour', '=', hour).executeTakeFirst();
    return Number(row?.requests ?? 0);
  }

  /** Forget batch ids older than a day: a retry comes within seconds. */
  async pruneBatches(now: number): Promise<void> {
    await this.db.deleteFrom('usage_batches').where('applied_at', '<', now - 86_400_000).execute();
  }

  /** Keep the error log to the last 1,000 entries per account (in the order `errors()` lists them) and 30 days. */
  async pruneErrors(accountIds: Iterable<string>, now: number): Promise<void> {
    const oldest = now - ERROR_LOG_DAYS * 86_400_000;
    await this.db.deleteFrom('usage_errors').where('at', '<', oldest).execute();
    for (const accountId of accountIds) {
      const cutoff = await this.db
        .selectFrom('usage_errors')
        .select(['id', 'at'])
        .where('account_id', '=', accountId)
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .offset(ERROR_LOG_LIMIT)
        .limit(1)
        .executeTakeFirst();
      if (!cutoff) continue;
      const at = Number(cutoff.at);
      await this.db
        .deleteFrom('usage_errors')
        .where('account_id', '=', accountId)
        .where((eb) => eb.or([eb('at', '<', at), eb.and([eb('at', '=', at), eb('id', '<=', cutoff.id)])]))
        .execute();
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

  /** Newest first (by each entry's latest failure). */
  async errors(accountId: string, since: number, limit = ERROR_LOG_LIMIT): Promise<UsageErrorEntry[]> {
    const rows = await this.db
      .selectFrom('usage_errors')
      .select(['account_id', 'key_id', 'at', 'service', 'path', 'http_status', 'error', 'count'])
      .where('account_id', '=', accountId)
      .where('at', '>=', since)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...row, at: Number(row.at), http_status: Number(row.http_status), count: Number(row.count) }));
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

/** Entries with the same fold key as one (copies: the caller's entries are left as they are). */
function foldErrors(errors: UsageErrorEntry[]): UsageErrorEntry[] {
  const folded = new Map<string, UsageErrorEntry>();
  for (const entry of errors) {
    const key = foldKey(entry.account_id, entry.service, entry.error, minuteOf(entry.at));
    const into = folded.get(key);
    if (into) foldInto(into, entry.key_id, entry.at, entry.path, entry.http_status, entry.count);
    else folded.set(key, { ...entry });
  }
  return [...folded.values()];
}
