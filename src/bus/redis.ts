import type { RateTime } from '../live/prepare.js';
import type { Logger } from '../log.js';
import { ChannelListener } from './channel-listener.js';
import type { LeaderLease } from './lease.js';
import type { RedisLink } from './link.js';
import { leaseKey } from './redis-lease.js';
import { growingCounter, LuaScript } from './script.js';
import { SnapshotHolder, type SharedSnapshot, type SnapshotBus } from './snapshot-bus.js';
import { decodeSnapshot, encodeSnapshot, versionOf } from './wire.js';

const CHANNEL = 'snapshots';
/** A stream of refused messages is logged at most this often (each line says how many so far). */
const REFUSAL_LOG_MS = 60_000;

/**
 * Publish one snapshot, fenced: only the holder of the leader lease's current
 * token may publish (else -1). The version comes from a counter that only
 * grows — past a Redis restart too, as the publisher passes the highest version
 * it has seen — and is written at the front of the message. The message is kept
 * as the latest (for starting nodes) and published (for running ones).
 */
const PUBLISH = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
${growingCounter('version', 'KEYS[2]', 'ARGV[3]')}
local message = '{"version":' .. string.format('%d', version) .. ',' .. string.sub(ARGV[2], 2)
redis.call('SET', KEYS[3], message)
redis.call('PUBLISH', ARGV[4], message)
return version
`);

export interface RedisBusOptions {
  /** The zone clock rates are serialised with (the same config on every node, so the same bytes). */
  time: RateTime;
  logger: Logger;
  /** The lease whose token fences publishing; a node without one (role `api`) only receives. */
  lease?: LeaderLease;
}

/**
 * Snapshot fan-out through Redis: whole snapshots (about 100 KB for the full
 * catalogue, at most one a second), each kept as the latest under one key and
 * published on one channel. Receivers skip anything not newer than what they
 * hold, so they never go back, and re-read the latest after any reconnect, so
 * a missed message costs at most the wait for the next one.
 */
export class RedisSnapshotBus extends SnapshotHolder implements SnapshotBus {
  private readonly channel: ChannelListener;
  private publishFailing = false;
  private refusedCount = 0;
  private refusalLoggedAt = -Infinity;
  private readonly time: RateTime;
  private readonly logger: Logger;
  private readonly lease: LeaderLease | undefined;

  constructor(
    private readonly link: RedisLink,
    options: RedisBusOptions,
  ) {
    super();
    this.channel = new ChannelListener(link, CHANNEL);
    this.time = options.time;
    this.logger = options.logger;
    this.lease = options.lease;
  }

  get healthy(): boolean {
    return this.link.healthy;
  }

  get refused(): number {
    return this.refusedCount;
  }

  /** Resolves once the latest snapshot is loaded, or at once if Redis is unreachable (it is loaded on reconnect). */
  async start(): Promise<void> {
    await this.channel.start(
      (message) => this.receive(message),
      () => this.loadLatest(),
    );
  }

  async publish(shared: SharedSnapshot): Promise<SharedSnapshot | null> {
    const token = this.lease?.token ?? null;
    if (token === null) return null;
    let version: number;
    try {
      const floor = this.current?.snapshot.version ?? 0;
      const keys = [leaseKey(this.link), this.link.key('snapshot:version'), this.link.key('snapshot:latest')];
      version = Number(await PUBLISH.run(this.link.client, keys, [token, encodeSnapshot(shared), floor, this.link.key(CHANNEL)]));
    } catch (error) {
      if (!this.publishFailing) this.logger.warn({ part: 'bus', err: (error as Error).message }, 'snapshot publish failed; Redis unreachable');
      this.publishFailing = true;
      return null;
    }
    this.publishFailing = false;
    if (version < 0) {
      this.logger.warn({ part: 'bus', token }, 'snapshot publish refused: this node no longer holds the leader lease');
      return null;
    }
    const delivered = { ...shared, snapshot: { ...shared.snapshot, version } };
    this.accept(delivered);
    return delivered;
  }

  async close(): Promise<void> {
    this.channel.stop();
    this.listeners.clear();
  }

  private async loadLatest(): Promise<void> {
    try {
      const message = await this.link.client.get(this.link.key('snapshot:latest'));
      if (message !== null) this.receive(message);
    } catch {
      // Unreachable again; the next reconnect loads it.
    }
  }

  private receive(message: string): void {
    const version = versionOf(message);
    if (version !== null && this.current && version <= this.current.snapshot.version) return;
    let decoded: SharedSnapshot;
    try {
      decoded = decodeSnapshot(message, this.time, this.current);
    } catch (error) {
      // Refused whole: the last good snapshot goes on being served.
      this.refusedCount++;
      const now = Date.now();
      if (now - this.refusalLoggedAt >= REFUSAL_LOG_MS) {
        this.refusalLoggedAt = now;
        this.logger.warn({ part: 'bus', err: (error as Error).message, refused: this.refusedCount }, 'snapshot message refused; serving the last good snapshot');
      }
      return;
    }
    this.accept(decoded);
  }

  private accept(shared: SharedSnapshot): void {
    if (this.current && shared.snapshot.version <= this.current.snapshot.version) return;
    this.hold(shared, (error) => this.logger.error({ part: 'bus', err: error }, 'a snapshot listener failed'));
  }
}
