import { allowanceFor } from '../access/directory.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { AlertRuleError, nextEdge, parseAlertRule, ruleHolds, ruleIdentity, type AlertRule } from '../domain/alert-rule.js';
import { applyOverrides, type Plan } from '../domain/plan.js';
import type { ZoneTime } from '../domain/time.js';
import type { Snapshot } from '../live/snapshot.js';
import type { Logger } from '../log.js';
import { describeStoreError } from '../store/store-errors.js';
import { WebhookFenceError, type StateChange, type WebhookEvent, type WebhookRepository } from '../store/webhook-repository.js';
import { alertBody, newMessageId, recoveredBody, staleBody } from './events.js';
import type { WebhookTimings } from './schedule.js';

export interface ProducerOptions {
  webhooks: WebhookRepository;
  /** The store's account revision: endpoints and accounts are loaded again when it moves. */
  revision: () => Promise<number>;
  catalogue: Catalogue;
  plans: ReadonlyMap<string, Plan>;
  time: ZoneTime;
  logger: Logger;
  timings: WebhookTimings;
  /** This leadership's lease epoch (null: a single process, unfenced). */
  epoch: number | null;
  /** Told when deliveries were queued (the sender looks at once). */
  onQueued: () => void;
  /** Told when a newer leader has written states: this leadership must stop. */
  onFenced: (fence: number) => void;
  /** Pending deliveries per endpoint at most (MAX_PENDING_PER_ENDPOINT unless a test sets fewer). */
  maxPendingPerEndpoint?: number;
}

/** One endpoint as evaluated: its rules parsed, its account's allowance worked out. */
interface Watched {
  id: string;
  rules: { rule: AlertRule; subject: string }[];
  events: ReadonlySet<WebhookEvent>;
  /** The references the account may read; null: all. */
  allowance: ReadonlySet<string> | null;
}

interface Held {
  state: string;
  since: number;
}

/** How often at most the store is asked whether endpoints or accounts changed. */
const REVISION_CHECK_MS = 1000;
/** Store failures are logged at most this often. */
const WARN_EVERY_MS = 60_000;

/**
 * Turns snapshots into queued deliveries, on the ingest leader only. For each
 * enabled endpoint of an account that has the `alerts` service: each rule's
 * edge (a crossing fires once, and again only after the rule was false), and
 * for each reference the account may read, `stale` once it has been stale
 * for 5 minutes while its market is open and `recovered` when it is fresh again.
 *
 * The last evaluated state of every subject is stored, and each change is
 * written with the deliveries it causes in one transaction, fenced by the
 * lease epoch: a new leader claims the fence, then loads the states, so a
 * crossing is queued exactly once across a change of leader. A write that
 * fails (the store away) changes nothing in memory: the next snapshot
 * computes the same change again.
 */
export class WebhookProducer {
  private watched: Watched[] = [];
  private states = new Map<string, Map<string, Held>>();
  private revision = -1;
  private checkedAt = -Infinity;
  private pending: Snapshot | null = null;
  private draining: Promise<void> | null = null;
  private stopped = false;
  private warnedAt = -Infinity;
  /** Whether the fence is claimed and the states loaded. */
  private ready = false;

  constructor(private readonly options: ProducerOptions) {}

  /** Claim the fence, then load endpoints and states; a store that does not answer now is tried again with each snapshot. */
  async start(): Promise<void> {
    try {
      await this.prepare();
    } catch (error) {
      this.failed(error);
    }
  }

  /** Evaluate this snapshot after the one under way (only the newest waiting one is kept). */
  snapshot(snapshot: Snapshot): void {
    if (this.stopped) return;
    this.pending = snapshot;
    this.draining ??= this.drain().finally(() => (this.draining = null));
  }

  /** Stop after the evaluation under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending = null;
    await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.pending && !this.stopped) {
      const snapshot = this.pending;
      this.pending = null;
      try {
        await this.prepare();
        await this.reloadIfChanged();
        await this.evaluate(snapshot);
      } catch (error) {
        this.failed(error);
      }
    }
  }

  /** Nothing is evaluated before this leadership has claimed the fence and read the states its predecessors left. */
  private async prepare(): Promise<void> {
    if (this.ready) return;
    if (this.options.epoch !== null) await this.options.webhooks.claimFence(this.options.epoch);
    await this.load();
    this.ready = true;
  }

  private failed(error: unknown): void {
    if (error instanceof WebhookFenceError) {
      this.stopped = true;
      this.pending = null;
      this.options.logger.warn({ part: 'webhooks', epoch: error.epoch, fence: error.fence }, 'webhook states refused: a leader with a newer epoch has written; this leadership stops producing');
      this.options.onFenced(error.fence);
      return;
    }
    this.warn(error);
  }

  private async reloadIfChanged(): Promise<void> {
    const now = this.options.time.now();
    if (this.revision !== -1 && now - this.checkedAt < REVISION_CHECK_MS) return;
    this.checkedAt = now;
    if ((await this.options.revision()) !== this.revision) await this.load();
  }

  private async load(): Promise<void> {
    const { webhooks, catalogue, plans, logger } = this.options;
    const revision = await this.options.revision();
    const [endpoints, rows] = await Promise.all([webhooks.watched(), webhooks.states()]);
    const lookup = (name: string) => catalogue.lookup(name)?.key;
    const watched: Watched[] = [];
    for (const { endpoint, account } of endpoints) {
      const base = plans.get(account.plan);
      if (!base || account.status !== 'active') continue;
      const plan = applyOverrides(base, account.overrides);
      if (!plan.services.includes('alerts')) continue;
      const rules: Watched['rules'] = [];
      for (const text of endpoint.rules) {
        try {
          const rule = parseAlertRule(text, lookup);
          rules.push({ rule, subject: `rule:${ruleIdentity(rule)}` });
        } catch (error) {
          // A catalogue changed since the rule was added: the rest of the endpoint still works.
          if (error instanceof AlertRuleError) logger.warn({ part: 'webhooks', endpoint: endpoint.id }, `${error.message}; the rule is skipped`);
          else throw error;
        }
      }
      watched.push({ id: endpoint.id, rules, events: new Set(endpoint.events), allowance: allowanceFor(plan, account.references, catalogue) });
    }
    const states = new Map<string, Map<string, Held>>();
    for (const row of rows) {
      let held = states.get(row.endpoint_id);
      if (!held) states.set(row.endpoint_id, (held = new Map()));
      held.set(row.subject, { state: row.state, since: row.since });
    }
    this.watched = watched;
    this.states = states;
    this.revision = revision;
  }

  private async evaluate(snapshot: Snapshot): Promise<void> {
    const { time, timings } = this.options;
    const now = time.now();
    const changes: StateChange[] = [];
    for (const endpoint of this.watched) {
      const held = this.states.get(endpoint.id);
      for (const { rule, subject } of endpoint.rules) {
        if (endpoint.allowance && !endpoint.allowance.has(rule.key)) continue;
        const rate = snapshot.rates.get(rule.key)?.rate;
        const current = held?.get(subject) ? 'fired' : 'armed';
        const step = nextEdge(current, ruleHolds(rule, rate));
        if (step.state === current) continue;
        // Armed is the absence of a row; fired is a row.
        changes.push({
          endpointId: endpoint.id,
          subject,
          from: current === 'armed' ? null : 'fired',
          to: step.state === 'armed' ? null : 'fired',
          since: now,
          message: step.fires && rate ? { id: newMessageId(), type: 'rate.alert', body: alertBody(rule, rate, time, now) } : undefined,
        });
      }
      if (endpoint.events.size === 0) continue;
      const keys = endpoint.allowance ?? snapshot.rates.keys();
      for (const key of keys) {
        const rate = snapshot.rates.get(key)?.rate;
        if (!rate) continue;
        const subject = `stale:${key}`;
        const stale = held?.get(subject);
        if (rate.status === 'ok') {
          if (!stale) continue;
          const recovered = stale.state === 'stale' && endpoint.events.has('recovered');
          changes.push({
            endpointId: endpoint.id,
            subject,
            from: stale.state,
            to: null,
            since: now,
            message: recovered ? { id: newMessageId(), type: 'rate.recovered', body: recoveredBody(rate, stale.since, time, now) } : undefined,
          });
        } else if (rate.status === 'stale' && rate.market?.state !== 'closed') {
          // Stale since now, as far as this endpoint knows; reported once that has lasted long enough. Never while
          // its market is closed: a closed market is not a stale price (a value stale before the close waits for the opening).
          if (!stale) changes.push({ endpointId: endpoint.id, subject, from: null, to: 'pending', since: now });
          else if (stale.state === 'pending' && now - stale.since >= timings.staleAfterMs) {
            changes.push({
              endpointId: endpoint.id,
              subject,
              from: 'pending',
              to: 'stale',
              since: stale.since,
              message: endpoint.events.has('stale') ? { id: newMessageId(), type: 'rate.stale', body: staleBody(rate, stale.since, time, now) } : undefined,
            });
          }
        }
        // `unavailable` (no value ever known) is no news either way.
      }
    }
    if (changes.length === 0) return;
    const conflicts = await this.options.webhooks.apply(changes, this.options.epoch, now, this.options.maxPendingPerEndpoint);
    const skipped = new Set(conflicts);
    let queued = false;
    changes.forEach((change, i) => {
      if (skipped.has(i)) return;
      let held = this.states.get(change.endpointId);
      if (!held) this.states.set(change.endpointId, (held = new Map()));
      if (change.to === null) held.delete(change.subject);
      else held.set(change.subject, { state: change.to, since: change.since });
      if (change.message) queued = true;
    });
    // Someone else moved a state (it should not happen while the fence holds): take the store's word.
    if (conflicts.length > 0) await this.load();
    if (queued) this.options.onQueued();
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.options.logger.warn({ part: 'webhooks', reason: describeStoreError(error) }, 'webhook alerts not evaluated: the store does not answer; the next snapshot tries again');
  }
}
