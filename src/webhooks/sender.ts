import { Webhook } from 'standardwebhooks';
import type { ZoneTime } from '../domain/time.js';
import type { Logger } from '../log.js';
import { describeStoreError } from '../store/store-errors.js';
import type { DueDelivery, DueFilter, WebhookRepository } from '../store/webhook-repository.js';
import { postWebhook, type PostOutcome } from './post.js';
import { nextAttemptAt, type WebhookTimings } from './schedule.js';

export interface SenderOptions {
  webhooks: WebhookRepository;
  time: ZoneTime;
  logger: Logger;
  timings: WebhookTimings;
  allowPrivate: boolean;
  /** Deliveries in flight at most. */
  concurrency?: number;
  /** How often the outbox is read when nothing is known to be due sooner. */
  pollMs?: number;
}

const CONCURRENCY = 16;
/** At most this many deliveries to one endpoint at once: a slow endpoint cannot hold every slot. */
const PER_ENDPOINT = 2;
/**
 * Attempts to failing endpoints (their latest attempt failed) hold at most
 * this share of the slots, one per endpoint, and one account at most half:
 * receivers that hang until the 10 s timeout cannot take the slots that
 * healthy endpoints, of that account or any other, are served from.
 */
const FAILING_SHARE = 0.25;
const ACCOUNT_SHARE = 0.5;
/**
 * The outbox changes only through this node while it leads (the producer
 * wakes the sender; the sender knows its own retry times), so reading it on a
 * timer is only a safety net.
 */
const POLL_MS = 5000;
/** On stepping down, attempts still waiting for an answer after this long are cut off (and stay pending for the next leader). */
const STOP_GRACE_MS = 2000;
const PRUNE_EVERY_MS = 3_600_000;
const WARN_EVERY_MS = 60_000;

/**
 * Sends what the outbox holds, on the ingest leader only (started and
 * stopped with each spell of leadership). Each delivery is signed with the
 * endpoint's secret by the Standard Webhooks library (`webhook-id` is the
 * delivery's id, the same for every attempt; `webhook-timestamp` and
 * `webhook-signature` are the attempt's) and POSTed; a 2xx answer delivers
 * it, anything else is retried on the schedule (schedule.ts) and every
 * attempt is logged. The outbox is in the store, so a delivery survives any
 * restart: a leader killed mid-attempt leaves it pending, and the next leader
 * sends it again under the same id (receivers deduplicate on it).
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | null = null;
  private reading = false;
  private again = false;
  private stopped = false;
  private prunedAt = -Infinity;
  private warnedAt = -Infinity;
  /** Attempts under way, by delivery id, and how many per endpoint. */
  private readonly inflight = new Map<string, Promise<void>>();
  /**
   * When each attempt ended (a sequence number), kept until the outbox has been
   * read again since: a list read while an attempt was under way may show that
   * delivery still due after its attempt recorded and left `inflight`, and
   * must not send it a second time.
   */
  private readonly ended = new Map<string, number>();
  private endings = 0;
  private readonly perEndpoint = new Map<string, number>();
  private readonly perAccount = new Map<string, number>();
  /** Attempts under way to failing endpoints. */
  private failingInFlight = 0;
  private readonly abort = new AbortController();
  private readonly concurrency: number;
  private readonly perAccountLimit: number;
  private readonly failingLimit: number;
  private readonly pollMs: number;

  constructor(private readonly options: SenderOptions) {
    this.concurrency = options.concurrency ?? CONCURRENCY;
    this.perAccountLimit = Math.max(1, Math.floor(this.concurrency * ACCOUNT_SHARE));
    this.failingLimit = Math.max(1, Math.floor(this.concurrency * FAILING_SHARE));
    this.pollMs = options.pollMs ?? POLL_MS;
  }

  start(): void {
    this.wake();
  }

  /** Look at the outbox now (new deliveries were queued, or a slot came free). */
  wake(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.reading = true;
    void this.fill().finally(() => {
      this.reading = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.wake();
      }
    });
  }

  /**
   * Stop taking deliveries. Attempts under way get a moment to finish and be
   * recorded; those still waiting then are cut off unrecorded, so they stay
   * pending and the next leader sends them (under the same id).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const cut = setTimeout(() => this.abort.abort(), STOP_GRACE_MS);
    await Promise.all(this.inflight.values());
    clearTimeout(cut);
  }

  /** Start every due delivery there is a slot for, then sleep until the next falls due (or the poll). */
  private async fill(): Promise<void> {
    const { webhooks, time } = this.options;
    let wait = this.pollMs;
    try {
      // Whether something due was not started (no slot, or under way still): an attempt's end wakes the sender for it.
      let waiting = this.inflight.size >= this.concurrency;
      if (!waiting) {
        const readAfter = this.endings;
        // Round-robin across accounts and endpoints, leaving out what could not be started now.
        for (const delivery of await webhooks.due(time.now(), this.concurrency * 2, this.busy())) {
          if (this.stopped) break;
          // Ended while the list was read: the list may predate its record (the ending woke the sender, which reads again).
          const endedDuringRead = (this.ended.get(delivery.id) ?? 0) > readAfter;
          if (endedDuringRead || this.inflight.has(delivery.id) || !this.hasSlotFor(delivery)) waiting = true;
          else this.begin(delivery);
        }
        // Endings before this read are in what it saw; no later read can predate them.
        for (const [id, at] of this.ended) if (at <= readAfter) this.ended.delete(id);
      }
      if (this.stopped) return;
      // Of what could be started once due; something due now but not started waits for an attempt's end, which wakes the sender.
      const nextDue = await webhooks.nextDue(this.busy());
      const now = time.now();
      if (nextDue !== null && (nextDue > now || !waiting)) wait = Math.min(wait, Math.max(1, nextDue - now));
      await this.pruneIfDue();
    } catch (error) {
      this.warn(error);
    }
    if (!this.stopped) {
      this.timer = setTimeout(() => this.wake(), wait);
      this.timer.unref();
    }
  }

  /** What the outbox read should leave out: deliveries under way, and endpoints, accounts and failing endpoints with no slot left. */
  private busy(): DueFilter {
    const endpoints = [...this.perEndpoint].filter(([, n]) => n >= PER_ENDPOINT).map(([id]) => id);
    const accounts = [...this.perAccount].filter(([, n]) => n >= this.perAccountLimit).map(([id]) => id);
    return { deliveries: [...this.inflight.keys()], endpoints, accounts, failing: this.failingInFlight >= this.failingLimit };
  }

  private hasSlotFor(delivery: DueDelivery): boolean {
    if (this.inflight.size >= this.concurrency) return false;
    if ((this.perAccount.get(delivery.account_id) ?? 0) >= this.perAccountLimit) return false;
    const toEndpoint = this.perEndpoint.get(delivery.endpoint_id) ?? 0;
    if (!delivery.failing) return toEndpoint < PER_ENDPOINT;
    return toEndpoint === 0 && this.failingInFlight < this.failingLimit;
  }

  private begin(delivery: DueDelivery): void {
    count(this.perEndpoint, delivery.endpoint_id, 1);
    count(this.perAccount, delivery.account_id, 1);
    if (delivery.failing) this.failingInFlight++;
    const attempt = this.attempt(delivery)
      .catch((error: unknown) => this.warn(error))
      .finally(() => {
        this.inflight.delete(delivery.id);
        this.ended.set(delivery.id, ++this.endings);
        count(this.perEndpoint, delivery.endpoint_id, -1);
        count(this.perAccount, delivery.account_id, -1);
        if (delivery.failing) this.failingInFlight--;
        this.wake();
      });
    this.inflight.set(delivery.id, attempt);
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    const { webhooks, time, timings, allowPrivate, logger } = this.options;
    const number = delivery.attempts + 1;
    const sentAt = time.now();
    let outcome: PostOutcome;
    try {
      const headers = signedHeaders(delivery, new Date(sentAt));
      outcome = await postWebhook(delivery.url, headers, delivery.body, { timeoutMs: timings.timeoutMs, allowPrivate, signal: this.abort.signal });
    } catch (error) {
      outcome = { status: null, error: `not sent: ${(error as Error).message}`, durationMs: 0 };
    }
    // Cut off by a step-down: left pending as it was, for the next leader.
    if (this.abort.signal.aborted && outcome.status === null) return;
    const at = time.now();
    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const retryAt = delivered ? null : nextAttemptAt(timings, delivery.created_at, number, at);
    const error = outcome.error ?? (delivered ? null : `HTTP ${outcome.status}`);
    const { disabled } = await webhooks.record({
      delivery,
      at,
      attempt: number,
      status_code: outcome.status,
      error,
      duration_ms: outcome.durationMs,
      outcome: delivered ? 'delivered' : retryAt === null ? 'given_up' : 'retrying',
      next_attempt_at: retryAt ?? undefined,
      disable_after_ms: timings.disableAfterMs,
    });
    // Never the URL (its query may hold a token) nor the secret: the endpoint's id says which it was.
    if (!delivered && retryAt === null) logger.warn({ part: 'webhooks', endpoint: delivery.endpoint_id, delivery: delivery.id, attempts: number }, 'webhook delivery given up after its 24 h of retries');
    if (disabled) logger.warn({ part: 'webhooks', endpoint: delivery.endpoint_id }, 'webhook endpoint disabled: its deliveries have failed for 3 days');
  }

  private async pruneIfDue(): Promise<void> {
    const now = this.options.time.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    await this.options.webhooks.prune(now);
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.options.logger.warn({ part: 'webhooks', reason: describeStoreError(error) }, 'webhook deliveries paused: the store does not answer; they go out once it does');
  }
}

/** Add `by` to a count of attempts under way; a count back at zero leaves the map. */
function count(counts: Map<string, number>, id: string, by: number): void {
  const n = (counts.get(id) ?? 0) + by;
  if (n > 0) counts.set(id, n);
  else counts.delete(id);
}

/** The three Standard Webhooks headers of one attempt, signed by the maintained library. */
export function signedHeaders(delivery: { id: string; secret: string; body: string }, at: Date): Record<string, string> {
  const signature = new Webhook(delivery.secret).sign(delivery.id, at, delivery.body);
  return { 'webhook-id': delivery.id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}
