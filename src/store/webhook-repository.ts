import type { Kysely, Selectable, Transaction } from 'kysely';
import { bumpRevision, toAccount, type Account } from './account-repository.js';
import type { Database, WebhookEndpointsTable, WebhookLogTable, WebhookOutboxTable } from './tables.js';
import { writeLogLine } from './webhook-log.js';
import { capPending, dueDeliveries, enqueue, MAX_PENDING_PER_ENDPOINT, withoutSkipped, type DueFilter, type OutboxMessage, type Replaced } from './webhook-queue.js';

export { MAX_PENDING_PER_ENDPOINT, type DueFilter, type OutboxMessage } from './webhook-queue.js';

/** The events an endpoint may take besides its rules' alerts. */
export const WEBHOOK_EVENTS = ['stale', 'recovered'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** An endpoint as listed: everything but its secret. */
export interface WebhookEndpoint {
  id: string;
  account_id: string;
  url: string;
  /** The rules as given (`usd_free>600000`). */
  rules: string[];
  events: WebhookEvent[];
  state: 'enabled' | 'disabled';
  failing_since: number | null;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
  /** Deliveries replaced, undelivered, by a newer event about the same rule or reference. */
  superseded: number;
  /** Deliveries dropped, oldest first, when more than the cap were pending. */
  dropped: number;
}

/** An endpoint with the account it belongs to: what the producer evaluates. */
export interface WatchedEndpoint {
  endpoint: WebhookEndpoint;
  account: Account;
}

/** A subject's stored state (`rule:<rule>` or `stale:<reference>`). */
export interface AlertStateRow {
  endpoint_id: string;
  subject: string;
  state: string;
  since: number;
}

/**
 * One subject's move from `from` (null: no row, the initial state) to `to`
 * (null: remove the row), with the delivery it causes, if any. Applied only
 * if the stored state is still `from`.
 */
export interface StateChange {
  endpointId: string;
  subject: string;
  from: string | null;
  to: string | null;
  since: number;
  message?: OutboxMessage;
}

/** A delivery that is due, with where and how to send it. */
export interface DueDelivery {
  id: string;
  endpoint_id: string;
  account_id: string;
  url: string;
  secret: string;
  type: string;
  body: string;
  created_at: number;
  attempts: number;
  /** Whether its endpoint's latest attempt failed. */
  failing: boolean;
}

/** What one attempt came to, as the sender decided it. */
export interface AttemptRecord {
  delivery: DueDelivery;
  at: number;
  /** The attempt's number, 1 for the first. */
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** `retrying` with `next_attempt_at`; `given_up` after the last. */
  outcome: 'delivered' | 'retrying' | 'given_up';
  next_attempt_at?: number;
  /** An endpoint failing at least this long (ms) by this attempt is disabled. */
  disable_after_ms: number;
}

export type WebhookLogEntry = Omit<WebhookLogTable, 'id'> & { id: number };

/** A change of webhook states refused: a leader with a newer epoch has written them since. */
export class WebhookFenceError extends Error {
  constructor(
    readonly fence: number,
    readonly epoch: number,
  ) {
    super(`webhook state write refused: epoch ${epoch} is older than the store's ${fence}`);
  }
}

/** The row of `store_revision` holding the highest leader epoch that has written webhook states. */
const WEBHOOK_FENCE = 4;
/** Deliveries finished this long ago leave the outbox (the log keeps their attempts). */
export const OUTBOX_KEEP_MS = 7 * 86_400_000;
/** The log keeps this long. */
export const LOG_KEEP_MS = 30 * 86_400_000;

export class WebhookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(endpoint: { id: string; accountId: string; url: string; secret: string; rules: string[]; events: WebhookEvent[] }, now = Date.now()): Promise<WebhookEndpoint> {
    const row: Selectable<WebhookEndpointsTable> = {
      id: endpoint.id,
      account_id: endpoint.accountId,
      url: endpoint.url,
      secret: endpoint.secret,
      rules_json: JSON.stringify(endpoint.rules),
      events_json: JSON.stringify(endpoint.events),
      state: 'enabled',
      failing_since: null,
      disabled_reason: null,
      created_at: now,
      updated_at: now,
      superseded: 0,
      dropped: 0,
    };
    // The revision tells the ingest leader to load its endpoints again.
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('webhook_endpoints').values(row).execute();
      await bumpRevision(trx);
    });
    return toEndpoint(row);
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toEndpoint);
  }

  async count(accountId: string): Promise<number> {
    const row = await this.db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** True when the account had that endpoint; its queued deliveries and states go with it. */
  async remove(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await bumpRevision(trx);
      return true;
    });
  }

  /** Enable a disabled endpoint again, its failures forgotten; false when the account has no such endpoint. */
  async enable(accountId: string, id: string, now = Date.now()): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('webhook_endpoints')
        .set({ state: 'enabled', failing_since: null, disabled_reason: null, updated_at: now })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await bumpRevision(trx);
      return true;
    });
  }

  /** Every enabled endpoint with its account: what the ingest leader evaluates. */
  async watched(): Promise<WatchedEndpoint[]> {
    const rows = await this.db
      .selectFrom('webhook_endpoints as e')
      .innerJoin('accounts as a', 'a.id', 'e.account_id')
      .selectAll('e')
      .select(['a.username', 'a.plan', 'a.status', 'a.references_json', 'a.origins_json', 'a.overrides_json', 'a.created_at as account_created_at', 'a.updated_at as account_updated_at'])
      .where('e.state', '=', 'enabled')
      .orderBy('e.id')
      .execute();
    return rows.map((row) => ({
      endpoint: toEndpoint(row),
      account: toAccount({
        id: row.account_id,
        username: row.username,
        plan: row.plan,
        status: row.status,
        references_json: row.references_json,
        origins_json: row.origins_json,
        overrides_json: row.overrides_json,
        created_at: row.account_created_at,
        updated_at: row.account_updated_at,
      }),
    }));
  }

  /** The stored states of every enabled endpoint's subjects. */
  async states(): Promise<AlertStateRow[]> {
    const rows = await this.db
      .selectFrom('webhook_alert_states as s')
      .innerJoin('webhook_endpoints as e', 'e.id', 's.endpoint_id')
      .select(['s.endpoint_id', 's.subject', 's.state', 's.since'])
      .where('e.state', '=', 'enabled')
      .execute();
    return rows.map((row) => ({ ...row, since: Number(row.since) }));
  }

  /** The highest leader epoch that has written webhook states (0 before any). */
  async fence(): Promise<number> {
    const row = await this.db.selectFrom('store_revision').select('revision').where('id', '=', WEBHOOK_FENCE).executeTakeFirst();
    return Number(row?.revision ?? 0);
  }

  /**
   * Move the fence up to `epoch`, or refuse with WebhookFenceError when a
   * newer leader has claimed it. A new leadership claims it before it loads
   * the states: a predecessor's write still under way either lands before
   * (and is loaded) or is refused.
   */
  async claimFence(epoch: number): Promise<void> {
    await claim(this.db, epoch);
  }

  /**
   * Apply state changes and queue their deliveries, all in one transaction
   * (fenced by `epoch` when there is one). A change whose stored state is no
   * longer its `from` is skipped with its delivery; the indexes of those are
   * returned, so the caller can read the states again. A delivery replaces an
   * undelivered one about the same subject, and an endpoint keeps at most
   * `maxPending` pending deliveries (the oldest are dropped); both are counted
   * on the endpoint and in its log.
   */
  async apply(changes: readonly StateChange[], epoch: number | null, now: number, maxPending = MAX_PENDING_PER_ENDPOINT): Promise<number[]> {
    if (changes.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      if (epoch !== null) await claim(trx, epoch);
      const conflicts: number[] = [];
      const replaced = new Map<string, Replaced[]>();
      for (let i = 0; i < changes.length; i++) {
        const change = changes[i]!;
        if (!(await applyOne(trx, change))) {
          conflicts.push(i);
          continue;
        }
        if (!change.message) continue;
        const gone = await enqueue(trx, change.endpointId, change.subject, change.message, now);
        replaced.set(change.endpointId, [...(replaced.get(change.endpointId) ?? []), ...gone]);
      }
      for (const [endpointId, gone] of replaced) {
        const dropped = await capPending(trx, endpointId, maxPending);
        if (gone.length > 0 || dropped > 0) await countLosses(trx, endpointId, gone, dropped, maxPending, now);
      }
      return conflicts;
    });
  }

  /**
   * Up to `limit` deliveries due by `now` to enabled endpoints, taken
   * round-robin across accounts and endpoints (see dueDeliveries), leaving
   * out what `skip` names.
   */
  async due(now: number, limit: number, skip: DueFilter = {}): Promise<DueDelivery[]> {
    const rows = await dueDeliveries(this.db, now, limit, skip);
    return rows.map((row) => ({
      id: row.id,
      endpoint_id: row.endpoint_id,
      account_id: row.account_id,
      url: row.url,
      secret: row.secret,
      type: row.type,
      body: row.body,
      created_at: Number(row.created_at),
      attempts: Number(row.attempts),
      failing: Number(row.failing) === 1,
    }));
  }

  /** Pending deliveries per endpoint of the account (endpoints with none are left out). */
  async pendingByEndpoint(accountId: string): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('webhook_outbox as o')
      .innerJoin('webhook_endpoints as e', 'e.id', 'o.endpoint_id')
      .select(['o.endpoint_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('e.account_id', '=', accountId)
      .where('o.state', '=', 'pending')
      .groupBy('o.endpoint_id')
      .execute();
    return new Map(rows.map((row) => [row.endpoint_id, Number(row.n)]));
  }

  /** When the next pending delivery to an enabled endpoint falls due, leaving out what `skip` names; null when none waits. */
  async nextDue(skip: DueFilter = {}): Promise<number | null> {
    const row = await withoutSkipped(
      this.db
        .selectFrom('webhook_outbox as o')
        .innerJoin('webhook_endpoints as e', 'e.id', 'o.endpoint_id')
        .select((eb) => eb.fn.min<number | null>('o.next_attempt_at').as('next'))
        .where('o.state', '=', 'pending')
        .where('e.state', '=', 'enabled'),
      skip,
    ).executeTakeFirst();
    return row?.next === null || row?.next === undefined ? null : Number(row.next);
  }

  /**
   * Record one attempt in one transaction: the delivery's new state, the log
   * line, the endpoint's failing streak. An endpoint whose streak reaches
   * `disable_after_ms` is disabled, says so in the log, and its other
   * deliveries are dropped. Returns whether it was disabled.
   */
  async record(attempt: AttemptRecord): Promise<{ disabled: boolean }> {
    const { delivery, at } = attempt;
    return this.db.transaction().execute(async (trx) => {
      const state: WebhookOutboxTable['state'] = attempt.outcome === 'delivered' ? 'delivered' : attempt.outcome === 'given_up' ? 'failed' : 'pending';
      const updated = await trx
        .updateTable('webhook_outbox')
        .set({ attempts: attempt.attempt, state, next_attempt_at: attempt.next_attempt_at ?? at, finished_at: state === 'pending' ? null : at })
        .where('id', '=', delivery.id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      const line = (outcome: WebhookLogTable['outcome']) =>
        writeLogLine(trx, {
          account_id: delivery.account_id,
          endpoint_id: delivery.endpoint_id,
          message_id: delivery.id,
          type: delivery.type,
          at,
          attempt: attempt.attempt,
          status_code: attempt.status_code,
          error: attempt.error,
          duration_ms: Math.round(attempt.duration_ms),
          outcome,
        });
      if (attempt.outcome === 'delivered') {
        await line('delivered');
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', delivery.endpoint_id).where('failing_since', 'is not', null).execute();
        return { disabled: false };
      }
      const endpoint = await trx.selectFrom('webhook_endpoints').select(['failing_since', 'state']).where('id', '=', delivery.endpoint_id).executeTakeFirst();
      const since = endpoint?.failing_since === null || endpoint?.failing_since === undefined ? at : Number(endpoint.failing_since);
      const disable = endpoint?.state === 'enabled' && at - since >= attempt.disable_after_ms;
      // A failure ends the delivery when it left the outbox meanwhile (replaced by a newer one, dropped over the cap, its endpoint disabled or removed) or its endpoint is disabled now.
      const dropped = Number(updated.numUpdatedRows) === 0 || disable;
      await line(dropped && attempt.outcome === 'retrying' ? 'given_up' : attempt.outcome);
      if (endpoint?.state !== 'enabled') return { disabled: false };
      if (!disable) {
        if (endpoint.failing_since === null) await trx.updateTable('webhook_endpoints').set({ failing_since: at }).where('id', '=', delivery.endpoint_id).execute();
        return { disabled: false };
      }
      const reason = `disabled: every attempt failed since ${new Date(since).toISOString()}`;
      await trx.updateTable('webhook_endpoints').set({ state: 'disabled', disabled_reason: reason, updated_at: at }).where('id', '=', delivery.endpoint_id).execute();
      await trx.updateTable('webhook_outbox').set({ state: 'failed', finished_at: at }).where('endpoint_id', '=', delivery.endpoint_id).where('state', '=', 'pending').execute();
      await writeLogLine(trx, { account_id: delivery.account_id, endpoint_id: delivery.endpoint_id, message_id: null, type: null, at, attempt: null, status_code: null, error: reason, duration_ms: null, outcome: 'disabled' });
      await bumpRevision(trx);
      return { disabled: true };
    });
  }

  /** The account's log, newest first (each entry folds a minute's events of one outcome to one endpoint). */
  async log(accountId: string, limit = 100): Promise<WebhookLogEntry[]> {
    const rows = await this.db.selectFrom('webhook_log').selectAll().where('account_id', '=', accountId).orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      ...row,
      id: Number(row.id),
      at: Number(row.at),
      minute: Number(row.minute),
      count: Number(row.count),
      attempt: row.attempt === null ? null : Number(row.attempt),
      status_code: row.status_code === null ? null : Number(row.status_code),
      duration_ms: row.duration_ms === null ? null : Number(row.duration_ms),
    }));
  }

  /** A delivery's row, for tests and the CLI. */
  async delivery(id: string): Promise<WebhookOutboxTable | null> {
    const row = await this.db.selectFrom('webhook_outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return row ?? null;
  }

  /** Drop finished deliveries after a week and log lines after 30 days. */
  async prune(now: number): Promise<void> {
    await this.db.deleteFrom('webhook_outbox').where('state', '!=', 'pending').where('finished_at', '<', now - OUTBOX_KEEP_MS).execute();
    await this.db.deleteFrom('webhook_log').where('at', '<', now - LOG_KEEP_MS).execute();
  }
}

async function claim(db: Kysely<Database> | Transaction<Database>, epoch: number): Promise<void> {
  const result = await db.updateTable('store_revision').set({ revision: epoch }).where('id', '=', WEBHOOK_FENCE).where('revision', '<=', epoch).executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return;
  const row = await db.selectFrom('store_revision').select('revision').where('id', '=', WEBHOOK_FENCE).executeTakeFirst();
  throw new WebhookFenceError(Number(row?.revision ?? 0), epoch);
}

/** One compare-and-set of a subject's state; false when the stored state is not `from`. */
async function applyOne(trx: Transaction<Database>, change: StateChange): Promise<boolean> {
  const { endpointId, subject, from, to, since } = change;
  if (from === null) {
    if (to === null) return true;
    const result = await trx
      .insertInto('webhook_alert_states')
      .values({ endpoint_id: endpointId, subject, state: to, since })
      .onConflict((oc) => oc.columns(['endpoint_id', 'subject']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }
  if (to === null) {
    const result = await trx.deleteFrom('webhook_alert_states').where('endpoint_id', '=', endpointId).where('subject', '=', subject).where('state', '=', from).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
  const result = await trx
    .updateTable('webhook_alert_states')
    .set({ state: to, since })
    .where('endpoint_id', '=', endpointId)
    .where('subject', '=', subject)
    .where('state', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Count, on the endpoint and in its log, the deliveries replaced by newer ones and those dropped over the cap. */
async function countLosses(trx: Transaction<Database>, endpointId: string, replaced: readonly Replaced[], dropped: number, cap: number, at: number): Promise<void> {
  const endpoint = await trx
    .updateTable('webhook_endpoints')
    .set((eb) => ({ superseded: eb('superseded', '+', replaced.length), dropped: eb('dropped', '+', dropped) }))
    .where('id', '=', endpointId)
    .returning('account_id')
    .executeTakeFirst();
  if (!endpoint) return;
  const line = { account_id: endpoint.account_id, endpoint_id: endpointId, at, attempt: null, status_code: null, duration_ms: null };
  const last = replaced.at(-1);
  if (last) await writeLogLine(trx, { ...line, message_id: last.id, type: last.type, error: 'replaced, undelivered, by a newer event about the same rule or reference', outcome: 'superseded' }, replaced.length);
  if (dropped > 0) await writeLogLine(trx, { ...line, message_id: null, type: null, error: `dropped, oldest first: more than ${cap} deliveries were waiting`, outcome: 'dropped' }, dropped);
}

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: row.id,
    account_id: row.account_id,
    url: row.url,
    rules: JSON.parse(row.rules_json) as string[],
    events: JSON.parse(row.events_json) as WebhookEvent[],
    state: row.state,
    failing_since: row.failing_since === null ? null : Number(row.failing_since),
    disabled_reason: row.disabled_reason,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    superseded: Number(row.superseded),
    dropped: Number(row.dropped),
  };
}
