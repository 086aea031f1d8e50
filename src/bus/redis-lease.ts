import { systemClock, type Clock } from '../domain/clock.js';
import type { Logger } from '../log.js';
import { epochOf, type LeaderLease } from './lease.js';
import type { RedisLink } from './link.js';
import { growingCounter, LuaScript } from './script.js';

export const LEASE_TTL_MS = 5000;
export const RENEW_EVERY_MS = 1000;
/** A leader that could not renew for this long steps down by itself, a second before anyone else may take over. */
const STEP_DOWN_AFTER_MS = LEASE_TTL_MS - 1000;

/** The lease key holds `<node id>#<epoch>`: the fencing token. */
export const leaseKey = (link: RedisLink): string => link.key('leader:lease');
const epochKey = (link: RedisLink): string => link.key('leader:epoch');

/**
 * Take the lease if free (as `SET NX PX` would), with a fresh epoch from a
 * counter that only grows — also past a Redis restart that lost it, since the
 * caller passes the highest epoch it has seen. Returns {taken, holder's token}.
 */
const ACQUIRE = new LuaScript(`
local holder = redis.call('GET', KEYS[1])
if holder then return {0, holder} end
${growingCounter('epoch', 'KEYS[2]', 'ARGV[3]')}
local token = ARGV[1] .. '#' .. epoch
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return {1, token}
`);

/** Compare-and-extend: only the holder of the token renews. */
const RENEW = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`);

/** Compare-and-delete, for a graceful hand-over. */
const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`);

/** Runs `tick` every `everyMs` until stopped; tests pass their own to freeze a leader. */
export type Schedule = (tick: () => void, everyMs: number) => { stop(): void };

const every: Schedule = (tick, everyMs) => {
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
};

export interface RedisLeaseOptions {
  id: string;
  logger: Logger;
  clock?: Clock;
  schedule?: Schedule;
}

/**
 * The ingest leader lease in Redis: taken with a new epoch, renewed every
 * second, lost after 5 s without renewal. The leader steps down by itself after
 * 4 s without a successful renewal, before any other node can take over; and
 * should it pause longer than that between checking and publishing, the
 * publish script compares its token with the lease and refuses it.
 */
export class RedisLeaderLease implements LeaderLease {
  readonly id: string;
  private held: string | null = null;
  private holderId: string | null = null;
  private renewedAt = 0;
  private highestEpoch = 0;
  /** The newest epoch known to have written history: a lease at or below it is handed back at once. */
  private fence = 0;
  private ticker: { stop(): void } | null = null;
  private busy = false;
  private closed = false;
  private readonly listeners = new Set<(isLeader: boolean) => void>();
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly schedule: Schedule;

  constructor(
    private readonly link: RedisLink,
    options: RedisLeaseOptions,
  ) {
    if (options.id.includes('#')) throw new RangeError('a node id may not contain "#"');
    this.id = options.id;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.schedule = options.schedule ?? every;
  }

  get isLeader(): boolean {
    return this.held !== null;
  }

  get token(): string | null {
    return this.held;
  }

  get leaderId(): string | null {
    return this.held !== null ? this.id : this.holderId;
  }

  get healthy(): boolean {
    return this.link.state === 'ready';
  }

  onChange(listener: (isLeader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {
    if (this.ticker || this.closed) return;
    this.ticker = this.schedule(() => void this.tick(), RENEW_EVERY_MS);
    await this.link.settled();
    await this.tick();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ticker?.stop();
    this.ticker = null;
    const token = this.held;
    if (token === null) return;
    this.lose();
    try {
      await RELEASE.run(this.link.client, [leaseKey(this.link)], [token]);
    } catch {
      // Unreachable: the lease simply runs out within 5 s.
    }
  }

  async respectFence(fence: number): Promise<void> {
    this.fence = Math.max(this.fence, fence);
    this.highestEpoch = Math.max(this.highestEpoch, fence);
    const token = this.held;
    // The same epoch as the fence is this leadership's own writing.
    if (token === null || (epochOf(token) ?? 0) >= fence) return;
    this.logger.warn({ part: 'lease', id: this.id, token, fence }, 'ingest leadership given up: a newer epoch has written history');
    this.lose();
    try {
      await RELEASE.run(this.link.client, [leaseKey(this.link)], [token]);
    } catch {
      // Unreachable: the lease simply runs out within 5 s.
    }
  }

  /** One round: renew while leading, else try to take the lease. */
  async tick(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      if (this.held !== null) await this.renew(this.held);
      else await this.acquire();
    } finally {
      this.busy = false;
    }
  }

  private async renew(token: string): Promise<void> {
    const sentAt = this.clock.now();
    try {
      const renewed = await RENEW.run(this.link.client, [leaseKey(this.link)], [token, LEASE_TTL_MS]);
      if (this.held !== token) return;
      if (renewed === 1) this.renewedAt = sentAt;
      else {
        this.logger.warn({ part: 'lease', id: this.id }, 'ingest leadership lost: the lease passed to another node');
        this.lose();
      }
    } catch {
      if (this.held === token && this.clock.now() - this.renewedAt >= STEP_DOWN_AFTER_MS) {
        this.logger.warn({ part: 'lease', id: this.id }, 'ingest leadership given up: the lease could not be renewed');
        this.lose();
      }
    }
  }

  private async acquire(): Promise<void> {
    const sentAt = this.clock.now();
    let reply: unknown;
    try {
      reply = await ACQUIRE.run(this.link.client, [leaseKey(this.link), epochKey(this.link)], [this.id, LEASE_TTL_MS, this.highestEpoch]);
    } catch {
      return;
    }
    const [taken, token] = reply as [number, string];
    this.holderId = token.slice(0, token.lastIndexOf('#'));
    this.highestEpoch = Math.max(this.highestEpoch, epochOf(token) ?? 0);
    if (taken !== 1) return;
    // Taken with the floor of before a fence arrived (an acquisition already under way): hand it back, the next takes a higher epoch.
    if (this.closed || (epochOf(token) ?? 0) <= this.fence) {
      await RELEASE.run(this.link.client, [leaseKey(this.link)], [token]).catch(() => {});
      return;
    }
    this.held = token;
    this.renewedAt = sentAt;
    this.logger.info({ part: 'lease', id: this.id, token }, 'ingest leadership taken');
    this.tell(true);
  }

  private lose(): void {
    this.held = null;
    this.holderId = null;
    this.tell(false);
  }

  private tell(isLeader: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(isLeader);
      } catch (error) {
        this.logger.error({ part: 'lease', err: error }, 'a leadership listener failed');
      }
    }
  }
}
