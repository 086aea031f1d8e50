import { randomBytes } from 'node:crypto';
import type { RedisLink } from '../../bus/link.js';
import { systemClock, type Clock } from '../../domain/clock.js';
import type { Logger } from '../../log.js';
import type { DayClock, LimitDecision, LimitSpec, SharedLimiter } from './limiter.js';
import { decide } from './decision.js';
import { takeQuota, type TakeReply } from './quota-script.js';

const MINUTE_MS = 60_000;
/** A node told that a window is spent asks again this often: quota handed back may have come free. */
const RECHECK_MS = 500;
/** The channel on which a node that finds a window spent asks the others for what they hold of it unused. */
const STARVED_CHANNEL = 'rl:starved';
const STARVED_REPEAT_MS = 5000;
/** After a failed exchange the key limits to this node's share for this long, then tries Redis again. */
const FAILED_BACKOFF_MS = 1000;
/** A busy key takes its quota for the next minute this close to the end of the current one. */
const PREFETCH_NEXT_MS = 2000;
/** Requests of one key waiting for quota at once; past this they are refused (a flood, not a client). */
const MAX_WAITERS = 1000;
const SWEEP_MS = 500;
/** Redis losing counters is logged at most this often. */
const RESTORE_LOG_MS = 60_000;
/** A key unused this long is forgotten (its quota was returned long before), all but what it holds of its day. */
const FORGET_MS = 120_000;
/** How often day holdings of forgotten keys are pruned once their day is over. */
const PRUNE_MS = 60_000;

/** One key's quota on this node for one minute window. */
class MinuteQuota {
  /** Requests this node may still admit from quota Redis granted it. */
  lease = 0;
  /** Admissions not yet charged to the minute counter (credit, or while Redis was away); negative for quota handed back. */
  owed = 0;
  /** The minute delta of the exchange under way. */
  inflight = 0;
  /** The shared minute counter as of the last exchange (quota handed out to every node). */
  count = 0;
  /** What both windows had left after the last exchange; null before the first. */
  free: number | null = null;
  lastGrant = 0;
  /** Admissions on credit this window (bounded: they are what may exceed the limit). */
  credit = 0;
  /** Admissions on this node this window, for the share it keeps to while Redis is away. */
  local = 0;
  /**
   * What this node has taken of the window as Redis last confirmed it: grants and charges, less
   * what it handed back. Put back into a Redis that lost the window (see quota-script.ts).
   */
  held = 0;
  /** When Redis said nothing is left (epoch ms); null while quota may remain. */
  exhaustedAt: number | null = null;
  /** When this node last asked the others for their unused quota of this window; null before it did. */
  askedAt: number | null = null;
  /** Whether it was granted quota since: then quota is moving between nodes, and asking again is worth it. */
  grantedSinceAsked = false;
  /** The exchange under way for this window, if any. */
  exchanging: Promise<void> | null = null;

  constructor(
    readonly ends: number,
    readonly dayEnds: number,
  ) {}
}

/** One key's state on this node. */
class KeyQuota {
  current: MinuteQuota;
  next: MinuteQuota | null = null;
  owedDay = 0;
  inflightDay = 0;
  dayCount = 0;
  localDay = 0;
  /** What this node has taken of the day window as Redis last confirmed it (as `MinuteQuota.held`). */
  heldDay = 0;
  dayExhausted = false;
  /** Until when Redis is not asked for this key after a failed exchange (epoch ms). */
  failedUntil = 0;
  lastUsedAt: number;
  /** Admissions since `recentSince`, and the rate (per ms) measured before: how much quota to ask for. */
  recent = 0;
  recentSince: number;
  rate = 0;
  readonly waiters: ((decision: LimitDecision) => void)[] = [];

  constructor(
    readonly keyId: string,
    public spec: LimitSpec,
    public dayEnds: number,
    now: number,
  ) {
    this.current = new MinuteQuota(minuteEnd(now), dayEnds);
    this.lastUsedAt = now;
    this.recentSince = now;
  }
}

const minuteEnd = (now: number): number => now - (now % MINUTE_MS) + MINUTE_MS;

export interface RedisLimiterOptions {
  /** How many nodes are live (the node registry's count): sizes the credit and the share. */
  nodes: () => number;
  logger: Logger;
  clock?: Clock;
}

/**
 * Per-key minute and day windows shared by every node through Redis, without a
 * Redis round trip on the request path.
 *
 * Quota slices: a node takes a slice of a key's remaining quota from Redis (one
 * atomic script that counts it as handed out, in both windows) and admits from
 * it locally. A slice is half of a fair share of what is left (left ÷ 2 ×
 * nodes), so a quiet key costs about one exchange per node and minute, and the
 * last requests of a window are handed out one at a time. The next slice is
 * taken in the background when half of the last one is used; a busy key takes
 * the next minute's first slice in the last two seconds of the current one.
 * A node that finds a window spent says so on a channel, and every node hands
 * back what it holds of that window unused (but one request's worth), so quota
 * left on a node whose traffic went elsewhere is not lost.
 *
 * Credit: a key this node holds no quota for (first sight, or a slice used up
 * before the next arrived) is admitted on credit, at most max(1, 1 % of the
 * limit ÷ nodes) times per window, charged to Redis at the next exchange.
 * Only past that does `consume` return a promise, settled by that exchange.
 * Grants never exceed the limit, so a window admits at most the limit plus
 * every node's credit: limit + 1 % + nodes.
 *
 * Redis unreachable (or an exchange failing): each node admits up to its share
 * (limit ÷ live nodes, by the last known count) per window, and charges those
 * admissions to Redis when it is back. rate-limiter-flexible makes one Redis
 * call per request (its in-memory parts only block keys already over the limit,
 * or stand in while Redis is down), which the request path cannot afford: hence
 * this one.
 */
export class RedisLimiter implements SharedLimiter {
  private readonly quotas = new Map<string, KeyQuota>();
  private readonly nodes: () => number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly sweeper: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private readonly stopWatching: () => void;
  /** This node's name in the windows' holder hashes: one per limiter, as what it holds lives in this process only. */
  private readonly node = randomBytes(6).toString('base64url');
  private restoreLoggedAt = -Infinity;
  /**
   * What this node holds of the day window of keys it forgot (unused for a while): kept until the
   * day ends, a few numbers a key, so a Redis that loses the day's counters gets it back.
   */
  private readonly dayHoldings = new Map<string, { dayEnds: number; held: number; spec: LimitSpec }>();
  private nextPrune = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly days: DayClock,
    options: RedisLimiterOptions,
  ) {
    this.nodes = () => Math.max(1, options.nodes());
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.sweeper = setInterval(() => this.sweep(this.clock.now()), SWEEP_MS);
    this.sweeper.unref();
    this.unsubscribe = link.subscribe(STARVED_CHANNEL, (message) => this.onStarved(message));
    this.stopWatching = link.onState((state) => {
      if (state === 'ready') this.reassert();
    });
  }

  get healthy(): boolean {
    return this.link.state === 'ready';
  }

  consume(keyId: string, spec: LimitSpec, now: number): LimitDecision | Promise<LimitDecision> {
    let quota = this.quotas.get(keyId);
    if (!quota) quota = this.remember(keyId, spec, now);
    quota.spec = spec;
    quota.lastUsedAt = now;
    this.roll(quota, now);
    const decision = this.decideNow(quota, now);
    if (decision) return decision;
    if (quota.waiters.length >= MAX_WAITERS) return this.verdict(false, quota, now);
    return new Promise((resolve) => quota.waiters.push(resolve));
  }

  /** Whether the limiter holds live state for the key (it forgets keys left unused; for tests and diagnostics). */
  tracks(keyId: string): boolean {
    return this.quotas.has(keyId);
  }

  /** Stop, handing every unused slice back so the other nodes can use it. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.unsubscribe();
    this.stopWatching();
    await Promise.all([...this.quotas.values()].flatMap((quota) => [quota.current.exchanging, quota.next?.exchanging]));
    if (this.link.state !== 'ready') return;
    const now = this.clock.now();
    const pending: Promise<void>[] = [];
    for (const quota of this.quotas.values()) {
      this.roll(quota, now);
      for (const minute of [quota.current, quota.next]) {
        if (!minute) continue;
        this.handBack(quota, minute);
        pending.push(this.exchange(quota, minute, 0));
      }
    }
    await Promise.all(pending);
  }

  /** The verdict if this node can give it now; null when it must wait for an exchange with Redis. */
  private decideNow(quota: KeyQuota, now: number): LimitDecision | null {
    if (this.link.state !== 'ready' || now < quota.failedUntil) return this.shareVerdict(quota, now);
    const minute = quota.current;
    this.prefetchNext(quota, now);
    if (minute.lease > 0) {
      minute.lease--;
      this.admitted(quota);
      if (minute.exhaustedAt === null && minute.lease <= minute.lastGrant >> 1) void this.exchange(quota, minute, this.sliceFor(quota, minute));
      return this.verdict(true, quota, now);
    }
    if (minute.exhaustedAt !== null || quota.dayExhausted) {
      if (now - (minute.exhaustedAt ?? 0) >= RECHECK_MS) void this.exchange(quota, minute, this.sliceFor(quota, minute));
      return this.verdict(false, quota, now);
    }
    if (minute.credit < this.creditFor(quota.spec)) {
      minute.credit++;
      this.owe(quota, minute);
      this.admitted(quota);
      void this.exchange(quota, minute, this.sliceFor(quota, minute));
      return this.verdict(true, quota, now);
    }
    void this.exchange(quota, minute, this.sliceFor(quota, minute) + quota.waiters.length + 1);
    return null;
  }

  /** Redis out of reach: this node admits up to its share of each window, to be charged when Redis is back. */
  private shareVerdict(quota: KeyQuota, now: number): LimitDecision {
    const minute = quota.current;
    const { perMinute, perDay } = quota.spec;
    const nodes = this.nodes();
    const minuteShare = Math.max(1, Math.floor(perMinute / nodes));
    const dayShare = perDay === null ? Infinity : Math.max(1, Math.floor(perDay / nodes));
    let allowed = false;
    if (minute.lease > 0) {
      minute.lease--;
      allowed = true;
    } else if (minute.local < minuteShare && quota.localDay < dayShare) {
      this.owe(quota, minute);
      allowed = true;
    }
    if (allowed) this.admitted(quota);
    const minuteCount = perMinute - Math.max(0, minuteShare - minute.local);
    const dayCount = perDay === null ? 0 : perDay - Math.max(0, dayShare - quota.localDay);
    return decide(allowed, quota.spec, { minuteEnds: minute.ends, minuteCount, dayEnds: quota.dayEnds, dayCount }, now);
  }

  /** Counts as the headers report them: everything handed out, less what this node holds unused, plus what it has not yet charged. */
  private verdict(allowed: boolean, quota: KeyQuota, now: number): LimitDecision {
    const minute = quota.current;
    const minuteCount = minute.count - minute.lease + minute.owed + minute.inflight;
    const nextLease = quota.next && quota.next.dayEnds === quota.dayEnds ? quota.next.lease : 0;
    const dayCount = quota.dayCount - minute.lease - nextLease + quota.owedDay + quota.inflightDay;
    return decide(allowed, quota.spec, { minuteEnds: minute.ends, minuteCount: Math.max(0, minuteCount), dayEnds: quota.dayEnds, dayCount: Math.max(0, dayCount) }, now);
  }

  private creditFor(spec: LimitSpec): number {
    const limit = spec.perDay === null ? spec.perMinute : Math.min(spec.perMinute, spec.perDay);
    return Math.max(1, Math.floor((limit * 0.01) / this.nodes()));
  }

  private owe(quota: KeyQuota, minute: MinuteQuota): void {
    minute.owed++;
    if (quota.spec.perDay !== null) quota.owedDay++;
  }

  private admitted(quota: KeyQuota): void {
    quota.current.local++;
    quota.localDay++;
    quota.recent++;
  }

  /** Give a window's unused quota, but for `keep`, back to the pool at the next exchange. */
  private handBack(quota: KeyQuota, minute: MinuteQuota, keep = 0): void {
    const back = minute.lease - keep;
    if (back <= 0) return;
    minute.owed -= back;
    if (minute.dayEnds === quota.dayEnds && quota.spec.perDay !== null) quota.owedDay -= back;
    minute.lease = keep;
  }

  /**
   * Half of a fair share of what the window has left: few exchanges while
   * plenty is left, one request at a time at the very end of a window.
   */
  private sliceFor(quota: KeyQuota, minute: MinuteQuota): number {
    const { perMinute, perDay } = quota.spec;
    const dayLeft = perDay === null ? Infinity : perDay - quota.dayCount;
    const free = minute.free ?? Math.min(perMinute, dayLeft);
    return Math.max(1, Math.floor(free / (2 * this.nodes())));
  }

  /** In the last seconds of a busy minute, take the next minute's first slice so its first requests need not wait. */
  private prefetchNext(quota: KeyQuota, now: number): void {
    const minute = quota.current;
    if (quota.next !== null || minute.ends - now > PREFETCH_NEXT_MS || minute.ends >= quota.dayEnds || quota.dayExhausted) return;
    // Only for a key busy enough to need more than its credit in the new minute's first moments.
    const rate = Math.max(quota.rate, quota.recent / Math.max(now - quota.recentSince, 10));
    if (rate * 1000 < 2) return;
    quota.next = new MinuteQuota(minute.ends + MINUTE_MS, quota.dayEnds);
    void this.exchange(quota, quota.next, this.sliceFor(quota, quota.next));
  }

  /** Move to the window `now` falls in; a minute's unused quota goes back to the day. */
  private roll(quota: KeyQuota, now: number): void {
    if (now >= quota.dayEnds) {
      quota.dayEnds = this.days.nextMidnight(now);
      quota.current = new MinuteQuota(minuteEnd(now), quota.dayEnds);
      quota.next = null;
      quota.owedDay = quota.inflightDay = quota.dayCount = quota.localDay = quota.heldDay = 0;
      quota.dayExhausted = false;
      return;
    }
    if (now < quota.current.ends) return;
    this.handBackDay(quota, quota.current);
    const ends = minuteEnd(now);
    const next = quota.next;
    quota.next = null;
    if (next && next.ends === ends) {
      quota.current = next;
    } else {
      if (next) this.handBackDay(quota, next);
      quota.current = new MinuteQuota(ends, quota.dayEnds);
    }
  }

  /** A minute gone by: its unused quota no longer counts for the minute, only for the day. */
  private handBackDay(quota: KeyQuota, minute: MinuteQuota): void {
    if (quota.spec.perDay !== null) quota.owedDay -= minute.lease;
    minute.lease = 0;
  }

  /** A key seen (again): a fresh state, with what this node still holds of its day if it was forgotten today. */
  private remember(keyId: string, spec: LimitSpec, now: number): KeyQuota {
    const quota = new KeyQuota(keyId, spec, this.days.nextMidnight(now), now);
    const kept = this.dayHoldings.get(keyId);
    if (kept) {
      this.dayHoldings.delete(keyId);
      if (kept.dayEnds === quota.dayEnds) quota.heldDay = kept.held;
    }
    this.quotas.set(keyId, quota);
    return quota;
  }

  /**
   * Connected again, maybe to a Redis that restarted empty: every window this node holds part of
   * is made sure of at once (an exchange puts back what Redis lost), not at the key's next request,
   * so another node's traffic cannot take that part meanwhile. Forgotten keys holding part of
   * today are brought back for it.
   */
  private reassert(): void {
    const now = this.clock.now();
    for (const [keyId, kept] of [...this.dayHoldings]) if (kept.dayEnds > now) this.remember(keyId, kept.spec, now);
    for (const quota of this.quotas.values()) {
      for (const minute of [quota.current, quota.next]) {
        if (minute && (minute.held > 0 || (minute.dayEnds === quota.dayEnds && quota.heldDay > 0))) void this.exchange(quota, minute, 0, true);
      }
    }
  }

  /**
   * One exchange with Redis for a window: settle what is owed, take `want` more (`check`: even
   * when there is neither, to put back what Redis lost). Never rejects; resolves once settled.
   */
  private exchange(quota: KeyQuota, minute: MinuteQuota, want: number, check = false): Promise<void> {
    if (minute.exchanging) return minute.exchanging;
    const sameDay = minute.dayEnds === quota.dayEnds;
    const { spec } = quota;
    const minuteDelta = minute.owed;
    const dayDelta = sameDay && spec.perDay !== null ? quota.owedDay : 0;
    if (want <= 0 && minuteDelta === 0 && dayDelta === 0 && !check) return Promise.resolve();
    const now = this.clock.now();
    minute.owed = 0;
    minute.inflight = minuteDelta;
    if (sameDay) {
      quota.owedDay -= dayDelta;
      quota.inflightDay += dayDelta;
    }
    const elapsed = now - quota.recentSince;
    if (elapsed >= 100) {
      quota.rate = quota.recent / elapsed;
      quota.recent = 0;
      quota.recentSince = now;
    }
    const settled = takeQuota(this.link.client, {
      minuteKey: this.link.key(`rl:${quota.keyId}:m:${minute.ends}`),
      dayKey: spec.perDay === null ? null : this.link.key(`rl:${quota.keyId}:d:${minute.dayEnds}`),
      node: this.node,
      minuteHeld: minute.held,
      // A minute of a day already gone by (the day rolled during the exchange) speaks only for its minute.
      dayHeld: sameDay ? quota.heldDay : 0,
      perMinute: spec.perMinute,
      perDay: spec.perDay,
      minuteDelta,
      dayDelta,
      want,
      minuteTtlMs: minute.ends - now + MINUTE_MS,
      dayTtlMs: minute.dayEnds - now + MINUTE_MS,
    })
      .then(
        (reply) => this.settle(quota, minute, want, minuteDelta, dayDelta, reply),
        () => this.settle(quota, minute, want, minuteDelta, dayDelta, null),
      )
      // A fault of ours in settling must not end the process: it is logged and this key retries.
      .catch((error: unknown) => {
        minute.exchanging = null;
        this.logger.error({ part: 'limiter', err: error }, 'settling a quota exchange failed');
      });
    minute.exchanging = settled;
    return settled;
  }

  private settle(quota: KeyQuota, minute: MinuteQuota, want: number, minuteDelta: number, dayDelta: number, reply: TakeReply | null): void {
    const now = this.clock.now();
    const sameDay = minute.dayEnds === quota.dayEnds;
    minute.exchanging = null;
    minute.inflight = 0;
    if (sameDay) quota.inflightDay -= dayDelta;
    if (reply === null) {
      // Count it as not applied: owing twice can only refuse, never over-admit.
      minute.owed += minuteDelta;
      if (sameDay) quota.owedDay += dayDelta;
      quota.failedUntil = now + FAILED_BACKOFF_MS;
      return this.answerWaiters(quota, now);
    }
    minute.held = Math.max(0, minute.held + minuteDelta + reply.granted);
    if (sameDay && quota.spec.perDay !== null) quota.heldDay = Math.max(0, quota.heldDay + dayDelta + reply.granted);
    if (reply.restored > 0) this.restored(quota, reply.restored, now);
    if (minute !== quota.current && minute !== quota.next) {
      // Granted to a minute already gone by: the day's share of it goes back.
      if (sameDay && quota.spec.perDay !== null) quota.owedDay -= reply.granted;
    } else {
      minute.lease += reply.granted;
      if (want > 0) minute.lastGrant = reply.granted;
      minute.count = reply.minuteCount;
      const dayFree = quota.spec.perDay === null ? Infinity : quota.spec.perDay - reply.dayCount;
      if (sameDay) {
        quota.dayCount = reply.dayCount;
        quota.dayExhausted = dayFree <= 0;
      }
      minute.free = Math.min(quota.spec.perMinute - reply.minuteCount, dayFree);
      // Spent: refuse once the lease is used up, ask the others for what they hold unused, and ask Redis again every RECHECK_MS.
      if (minute.free > 0) minute.exhaustedAt = null;
      else if (want > 0 || minute.exhaustedAt === null) minute.exhaustedAt = now;
      if (reply.granted > 0) minute.grantedSinceAsked = true;
      if (minute.free <= 0 && reply.granted < want && this.mayAsk(minute, now)) {
        minute.askedAt = now;
        minute.grantedSinceAsked = false;
        this.link.client.publish(this.link.key(STARVED_CHANNEL), `${minute.ends}:${quota.keyId}`).catch(() => {});
      }
    }
    this.answerWaiters(quota, now);
  }

  /** After an exchange: move to the current window and answer whoever waited for it, as far as it allows. */
  private answerWaiters(quota: KeyQuota, now: number): void {
    this.roll(quota, now);
    while (quota.waiters.length > 0) {
      const decision = this.decideNow(quota, now);
      if (!decision) break;
      quota.waiters.shift()!(decision);
    }
  }

  private restored(quota: KeyQuota, amount: number, now: number): void {
    if (now - this.restoreLoggedAt < RESTORE_LOG_MS) return;
    this.restoreLoggedAt = now;
    this.logger.warn({ part: 'limiter', key: quota.keyId, restored: amount }, 'Redis had lost rate-limit counts (a restart?); this node put back what it had taken of the windows');
  }

  /**
   * Ask the others once per spent window; again only once quota has come back
   * to this node since (it is moving between nodes, so some may sit elsewhere),
   * or after a while. A key hammered past its limit thus costs no notices.
   */
  private mayAsk(minute: MinuteQuota, now: number): boolean {
    if (minute.askedAt === null) return true;
    const since = now - minute.askedAt;
    return since >= STARVED_REPEAT_MS || (minute.grantedSinceAsked && since >= RECHECK_MS);
  }

  /** A node found a window spent: hand back what this node holds of it unused, but one request's worth. */
  private onStarved(message: string): void {
    const split = message.indexOf(':');
    const ends = Number(message.slice(0, split));
    const quota = this.quotas.get(message.slice(split + 1));
    if (!quota || this.link.state !== 'ready') return;
    for (const minute of [quota.current, quota.next]) {
      if (!minute || minute.ends !== ends || minute.lease <= 1) continue;
      this.handBack(quota, minute, 1);
      void this.exchange(quota, minute, 0);
    }
  }

  /** Twice a second: charge what is owed (credit, quota handed back), forget keys long unused (keeping what they hold of their day). */
  private sweep(now: number): void {
    if (now >= this.nextPrune) {
      this.nextPrune = now + PRUNE_MS;
      for (const [keyId, kept] of this.dayHoldings) if (kept.dayEnds <= now) this.dayHoldings.delete(keyId);
    }
    for (const [keyId, quota] of this.quotas) {
      this.roll(quota, now);
      const settled = !quota.current.exchanging && quota.current.owed === 0 && quota.owedDay === 0 && quota.waiters.length === 0 && quota.current.lease === 0 && quota.next === null;
      if (now - quota.lastUsedAt >= FORGET_MS && settled) {
        this.quotas.delete(keyId);
        if (quota.heldDay > 0 && quota.dayEnds > now) this.dayHoldings.set(keyId, { dayEnds: quota.dayEnds, held: quota.heldDay, spec: quota.spec });
        continue;
      }
      if (this.link.state !== 'ready' || now < quota.failedUntil) continue;
      void this.exchange(quota, quota.current, 0);
      if (quota.next) void this.exchange(quota, quota.next, 0);
    }
  }
}
