import { checkKeyLive, checkOrigin, checkService } from '../access/authenticate.js';
import type { AccessDirectory, KeyAccess } from '../access/directory.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { AlertRule } from '../domain/alert-rule.js';
import { ApiError, errorBody } from '../domain/errors.js';
import type { ZoneTime } from '../domain/time.js';
import type { RateUnit } from '../domain/units.js';
import type { Logger } from '../log.js';
import { StreamAlerts } from './alerts.js';
import { errorFrame, reconnectFrame } from './frames.js';
import type { Selection, StreamHub } from './hub.js';
import { allowedKeys, keepsKeys, type AllowedKeys } from './selection.js';
import type { StreamSink, Subscriber } from './sink.js';

/** How often open streams are checked for what no change notice announces: a key reaching its expiry, a stream its lifetime. */
export const CHECK_MS = 500;

/**
 * A stream ends up to this share of its `max_stream_seconds` early, picked at
 * random when it opens: streams opened together (every client reconnecting
 * after a restart) then do not all end, and reconnect, together.
 */
const LIFETIME_SPREAD = 0.1;

/** What a stream was opened with, kept to check it again. */
export interface StreamRequest {
  access: KeyAccess;
  /** `?keys=` as canonical keys; null: the whole allowance. */
  requested: readonly string[] | null;
  unit: RateUnit;
  /** `?alerts=` rules, checked against the stream's keys at admission; empty: none. */
  alerts: readonly AlertRule[];
  /** The browser origin it came from, for the account's allow-list. */
  origin: string | undefined;
  /** The opening request's id, quoted by the error event that ends it. */
  requestId: string;
  log: Pick<Logger, 'info' | 'error'>;
}

export interface StreamWatchCounts {
  /** Streams ended because their key, account or plan no longer allowed them. */
  refused: number;
  /** Streams ended at their plan's max_stream_seconds. */
  lifetime: number;
  /** Streams moved to another selection (their plan changed what they read, or how often). */
  reselected: number;
}

interface Watched {
  readonly subscriber: Subscriber;
  readonly request: StreamRequest;
  /** The key's entry as last checked: a reload replaces every entry, so a new object means look again. */
  access: KeyAccess;
  selection: Selection;
  readonly openedAt: number;
  /** This stream's share of LIFETIME_SPREAD, from 0 to 1. */
  readonly spread: number;
  /** The first moment the periodic check has something to do for it: key expiry or lifetime end. */
  due: number;
}

/**
 * Holds every open stream to the access it was admitted with.
 * Admission runs once, when a stream opens; afterwards the stream is checked
 * again at each reload of the key directory (every account, key or plan
 * change, announced by a change notice or found by the store poll) and, for
 * key expiry and the plan's `max_stream_seconds`, every CHECK_MS. Nothing
 * here runs per event: the fan-out never looks at access.
 *
 * A stream whose key is revoked or expired, whose account is suspended, or
 * whose plan lost the `stream` service (or `alerts`, for a stream with rules; or whose origin is no longer allowed)
 * gets an `error` event with the envelope the same request would now be
 * refused with, then ends. A plan change that alters what the stream may read
 * (references) or how often (refresh interval) moves it to the new selection
 * with a fresh `snapshot` event; when none of its requested references is
 * left it ends with REFERENCE_NOT_IN_PLAN.
 */
export class StreamWatch {
  private readonly streams = new Set<Watched>();
  private readonly counted: StreamWatchCounts = { refused: 0, lifetime: 0, reselected: 0 };
  private readonly timer: NodeJS.Timeout;
  private readonly stopReloads: () => void;

  constructor(
    private readonly hub: StreamHub,
    private readonly directory: AccessDirectory,
    private readonly catalogue: Catalogue,
    private readonly time: ZoneTime,
    private readonly checkMs = CHECK_MS,
  ) {
    this.stopReloads = directory.onReload(() => this.checkAll());
    this.timer = setInterval(() => this.checkDue(), checkMs);
    this.timer.unref();
  }

  /** Opens the stream on the hub with `keys` (as allowed at admission) and keeps it checked until it ends. */
  open(sink: StreamSink, request: StreamRequest, keys: AllowedKeys, onClose: () => void): void {
    const now = this.time.now();
    const plan = request.access.account.plan;
    const selection: Selection = { intervalSeconds: plan.refresh_interval_seconds, keys: keys.list, tag: keys.tag, unit: request.unit };
    let watched: Watched | null = null;
    const alerts = request.alerts.length === 0 ? null : new StreamAlerts(request.alerts, (ms) => this.time.format(ms));
    const subscriber = this.hub.open(
      sink,
      selection,
      () => {
        if (watched) this.streams.delete(watched);
        onClose();
      },
      alerts,
    );
    // Dropped already (its first write overflowed): nothing to watch.
    if (!subscriber.open) return;
    watched = { subscriber, request, access: request.access, selection, openedAt: now, spread: Math.random(), due: 0 };
    watched.due = this.dueOf(watched);
    this.streams.add(watched);
    // The directory may have reloaded since admission (the slot was taken meanwhile): never miss that change.
    if (this.directory.lookup(request.access.hash) !== request.access) this.check(watched, now);
  }

  counts(): StreamWatchCounts {
    return { ...this.counted };
  }

  stop(): void {
    clearInterval(this.timer);
    this.stopReloads();
  }

  /** After a directory reload: every stream against its key's new entry. */
  private checkAll(): void {
    const now = this.time.now();
    for (const watched of this.streams) this.check(watched, now);
  }

  /** Streams whose key expiry or lifetime end has come. */
  private checkDue(): void {
    const now = this.time.now();
    for (const watched of this.streams) {
      if (now < watched.due) continue;
      if (now >= this.endOfLife(watched)) this.endLifetime(watched, now);
      else this.check(watched, now);
    }
  }

  /** Admission again, from the key's current entry, without the rate limit (an open stream spends no requests). */
  private check(watched: Watched, now: number): void {
    try {
      const access = checkKeyLive(this.directory.lookup(watched.access.hash), now);
      checkService(access, 'stream');
      // A stream with rules needs `alerts` too: a plan that drops it ends the stream, as for `stream`.
      if (watched.request.alerts.length > 0) checkService(access, 'alerts');
      checkOrigin(access, watched.request.origin);
      if (access !== watched.access) this.follow(watched, access);
    } catch (error) {
      this.refuse(watched, error, now);
    }
  }

  /** The key's entry was rebuilt: keep the stream's selection, or move it to what the plan now allows. */
  private follow(watched: Watched, access: KeyAccess): void {
    const { selection, request } = watched;
    const interval = access.account.plan.refresh_interval_seconds;
    if (interval !== selection.intervalSeconds || !keepsKeys(this.catalogue, selection, request.requested, access)) {
      const keys = allowedKeys(this.catalogue, request.requested, access);
      watched.selection = { intervalSeconds: interval, keys: keys.list, tag: keys.tag, unit: request.unit };
      this.hub.reselect(watched.subscriber, watched.selection);
      this.counted.reselected++;
      request.log.info({ part: 'stream', key_id: access.id, keys: keys.list.length, refresh_interval_seconds: interval }, 'stream follows a plan change');
    }
    watched.access = access;
    watched.due = this.dueOf(watched);
  }

  private refuse(watched: Watched, error: unknown, now: number): void {
    if (!(error instanceof ApiError)) watched.request.log.error({ part: 'stream', err: error }, 'checking an open stream failed');
    const refusal = error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR');
    this.counted.refused++;
    watched.request.log.info({ part: 'stream', key_id: watched.access.id, error: refusal.code }, 'stream ended: access withdrawn');
    watched.subscriber.end(errorFrame(errorBody(refusal.code, refusal.message, this.time.format(now), watched.request.requestId)));
  }

  private endLifetime(watched: Watched, now: number): void {
    this.counted.lifetime++;
    watched.subscriber.end(reconnectFrame(this.time.format(now), watched.access.account.plan.max_stream_seconds));
  }

  /**
   * When the stream ends for its lifetime: its share of the spread early, and
   * at the last check before the lifetime runs out, so that it never lives
   * longer than `max_stream_seconds`.
   */
  private endOfLife(watched: Watched): number {
    return watched.openedAt + watched.access.account.plan.max_stream_seconds * 1000 * (1 - LIFETIME_SPREAD * watched.spread) - this.checkMs;
  }

  private dueOf(watched: Watched): number {
    return Math.min(watched.access.expiresAt ?? Infinity, this.endOfLife(watched));
  }
}
