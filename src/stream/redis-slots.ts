import type { RedisLink } from '../bus/link.js';
import { LuaScript } from '../bus/script.js';
import type { Clock } from '../domain/clock.js';
import { MemoryStreamSlots, type StreamSlots } from './slots.js';

/** A stream's slot lives this long past its node's last heartbeat: a dead node's streams free themselves. */
export const SLOT_TTL_MS = 15_000;

/**
 * KEYS[1]: the account's sorted set of stream ids, scored by expiry.
 * ARGV: now, expiry, stream id, max. Expired slots go first, then the count decides.
 */
const ACQUIRE = new LuaScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ${SLOT_TTL_MS})
return 1
`);

/**
 * Open streams per account counted across every node: one sorted set per
 * account, each stream's score its expiry, renewed by its node's heartbeat.
 * With Redis unreachable each node counts its own streams (the in-process
 * twin), so streams keep opening, at worst up to max per node, until it returns.
 */
export class RedisStreamSlots implements StreamSlots {
  private readonly held = new Map<string, string>();
  private readonly local = new MemoryStreamSlots();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly link: RedisLink,
    private readonly clock: Clock,
    heartbeatMs = SLOT_TTL_MS / 3,
  ) {
    this.heartbeat = setInterval(() => void this.renew(), heartbeatMs);
    this.heartbeat.unref();
  }

  async acquire(accountId: string, streamId: string, max: number): Promise<boolean> {
    const now = this.clock.now();
    try {
      const granted = (await ACQUIRE.run(this.link.client, [this.keyOf(accountId)], [now, now + SLOT_TTL_MS, streamId, max])) === 1;
      if (granted) this.held.set(streamId, accountId);
      return granted;
    } catch {
      return this.local.acquire(accountId, streamId, max);
    }
  }

  release(accountId: string, streamId: string): void {
    this.local.release(accountId, streamId);
    if (!this.held.delete(streamId)) return;
    this.link.client.zrem(this.keyOf(accountId), streamId).catch(() => {});
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    const pipeline = this.link.client.pipeline();
    for (const [streamId, accountId] of this.held) pipeline.zrem(this.keyOf(accountId), streamId);
    this.held.clear();
    await pipeline.exec().catch(() => {});
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const expiry = this.clock.now() + SLOT_TTL_MS;
    const pipeline = this.link.client.pipeline();
    for (const [streamId, accountId] of this.held) {
      pipeline.zadd(this.keyOf(accountId), 'XX', expiry, streamId);
      pipeline.pexpire(this.keyOf(accountId), SLOT_TTL_MS);
    }
    await pipeline.exec().catch(() => {});
  }

  private keyOf(accountId: string): string {
    return `${this.link.prefix}streams:${accountId}`;
  }
}
