import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database, WebhookEndpointsTable, WebhookOutboxTable } from './tables.js';

type OutboxWithEndpoints = Database & { o: WebhookOutboxTable; e: WebhookEndpointsTable };

/** Pending deliveries one endpoint may have at most; past it the oldest are dropped. */
export const MAX_PENDING_PER_ENDPOINT = 1000;

/** A delivery to queue: its id (`msg_…`) is the `webhook-id` of every attempt. */
export interface OutboxMessage {
  id: string;
  type: string;
  body: string;
}

/** An undelivered delivery a newer one replaced. */
export interface Replaced {
  id: string;
  type: string;
}

/**
 * Queue a delivery about `subject`, replacing any undelivered one about the
 * same subject: a receiver wants the latest news of a rule or a reference, and
 * a dead endpoint then holds one delivery per subject, not one per event. The
 * new delivery takes over the retry schedule of what it replaces (its
 * attempts and its next attempt, if later than now), so an endpoint that is
 * failing is not tried afresh with every new event.
 */
export async function enqueue(trx: Transaction<Database>, endpointId: string, subject: string, message: OutboxMessage, now: number): Promise<Replaced[]> {
  const replaced = await trx
    .deleteFrom('webhook_outbox')
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .where('subject', '=', subject)
    .returning(['id', 'type', 'attempts', 'next_attempt_at'])
    .execute();
  let attempts = 0;
  let next = now;
  for (const row of replaced) {
    attempts = Math.max(attempts, Number(row.attempts));
    next = Math.max(next, Number(row.next_attempt_at));
  }
  await trx
    .insertInto('webhook_outbox')
    .values({ id: message.id, endpoint_id: endpointId, subject, type: message.type, body: message.body, created_at: now, attempts, next_attempt_at: next, state: 'pending', finished_at: null })
    .execute();
  return replaced.map((row) => ({ id: row.id, type: row.type }));
}

/** Drop an endpoint's oldest pending deliveries beyond `cap`; returns how many were dropped. */
export async function capPending(trx: Transaction<Database>, endpointId: string, cap: number): Promise<number> {
  const row = await trx
    .selectFrom('webhook_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  const over = Number(row?.n ?? 0) - cap;
  if (over <= 0) return 0;
  const oldest = trx.selectFrom('webhook_outbox').select('id').where('endpoint_id', '=', endpointId).where('state', '=', 'pending').orderBy('created_at').orderBy('id').limit(over);
  const result = await trx.deleteFrom('webhook_outbox').where('id', 'in', oldest).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** What the sender cannot start now, so the outbox read leaves it out. */
export interface DueFilter {
  /** Deliveries under way. */
  deliveries?: readonly string[];
  /** Endpoints with as many attempts under way as they may have. */
  endpoints?: readonly string[];
  /** Accounts with as many attempts under way as they may have. */
  accounts?: readonly string[];
  /** Leave out endpoints that are failing (their share of attempts is taken). */
  failing?: boolean;
}

/** A read of the outbox joined to its endpoints (`o`, `e`), without what `skip` names. */
export function withoutSkipped<Q extends SelectQueryBuilder<OutboxWithEndpoints, 'o' | 'e', object>>(query: Q, skip: DueFilter): Q {
  let q = query as SelectQueryBuilder<OutboxWithEndpoints, 'o' | 'e', object>;
  if (skip.deliveries?.length) q = q.where('o.id', 'not in', skip.deliveries);
  if (skip.endpoints?.length) q = q.where('o.endpoint_id', 'not in', skip.endpoints);
  if (skip.accounts?.length) q = q.where('e.account_id', 'not in', skip.accounts);
  if (skip.failing) q = q.where('e.failing_since', 'is', null);
  return q as Q;
}

/**
 * Due deliveries to enabled endpoints, taken round-robin: each account's
 * first, then each account's second, and so on, where an account's turns go
 * to its endpoints in turn (each endpoint's longest waiting delivery first,
 * endpoints that are not failing before those that are). A dead endpoint's
 * pile of overdue retries therefore never comes before another endpoint's
 * first delivery, nor one account's endpoints before another account's.
 */
export function dueDeliveries(db: Kysely<Database>, now: number, limit: number, skip: DueFilter) {
  const due = db
    .selectFrom('webhook_outbox as o')
    .innerJoin('webhook_endpoints as e', 'e.id', 'o.endpoint_id')
    .select(['o.id', 'o.endpoint_id', 'e.account_id', 'e.url', 'e.secret', 'o.type', 'o.body', 'o.created_at', 'o.attempts', 'o.next_attempt_at'])
    .select((eb) => [
      sql<number>`case when ${eb.ref('e.failing_since')} is null then 0 else 1 end`.as('failing'),
      eb.fn.agg<number>('row_number').over((ob) => ob.partitionBy('o.endpoint_id').orderBy('o.next_attempt_at').orderBy('o.id')).as('endpoint_turn'),
    ])
    .where('o.state', '=', 'pending')
    .where('o.next_attempt_at', '<=', now)
    .where('e.state', '=', 'enabled');
  const turns = db
    .selectFrom(withoutSkipped(due, skip).as('d'))
    .selectAll()
    .select((eb) =>
      eb.fn
        .agg<number>('row_number')
        .over((ob) => ob.partitionBy('d.account_id').orderBy('d.endpoint_turn').orderBy('d.failing').orderBy('d.next_attempt_at').orderBy('d.endpoint_id'))
        .as('account_turn'),
    );
  return db.selectFrom(turns.as('t')).selectAll().orderBy('t.account_turn').orderBy('t.failing').orderBy('t.next_attempt_at').orderBy('t.id').limit(limit).execute();
}
