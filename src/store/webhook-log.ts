import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, WebhookLogTable } from './tables.js';

/** One event for an account's webhook log; its minute is that of `at`. */
export type WebhookLogLine = Omit<WebhookLogTable, 'id' | 'minute' | 'count'>;

const MINUTE_MS = 60_000;

/** The later of two values of one column, by `at`, when a line folds into the stored row. */
const latest = <T>(column: string) => sql.raw<T>(`case when excluded.at >= webhook_log.at then excluded.${column} else webhook_log.${column} end`);

/**
 * Add `count` events to the log, folded as the usage error log folds: one row
 * per (endpoint, outcome, minute) with a count, the latest event's details
 * standing. A dead endpoint retried many times a minute, or an endpoint
 * receiving every second, writes one row a minute per outcome, not one per
 * attempt.
 */
export async function writeLogLine(db: Kysely<Database> | Transaction<Database>, line: WebhookLogLine, count = 1): Promise<void> {
  await db
    .insertInto('webhook_log')
    .values({ ...line, minute: line.at - (line.at % MINUTE_MS), count })
    .onConflict((oc) =>
      oc.columns(['endpoint_id', 'outcome', 'minute']).doUpdateSet({
        count: sql`webhook_log."count" + excluded."count"`,
        at: latest<number>('at'),
        message_id: latest<string | null>('message_id'),
        type: latest<string | null>('type'),
        attempt: latest<number | null>('attempt'),
        status_code: latest<number | null>('status_code'),
        error: latest<string | null>('error'),
        duration_ms: latest<number | null>('duration_ms'),
      }),
    )
    .execute();
}
