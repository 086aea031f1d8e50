import { FailedAttempts, type FailedKeyThrottle } from '../access/failed-attempts.js';
import type { SharedLimiter } from '../access/limiter/limiter.js';
import { MemoryLimiter } from '../access/limiter/memory.js';
import { RedisLimiter } from '../access/limiter/redis.js';
import { SharedFailedAttempts } from '../access/shared-failed-attempts.js';
import { newNodeId, SoleLeader, type LeaderLease } from '../bus/lease.js';
import { RedisLink } from '../bus/link.js';
import { MemorySnapshotBus } from '../bus/memory.js';
import { SoleNode, type NodeInfo, type NodeRegistry } from '../bus/nodes.js';
import { LocalNotices, type Notices } from '../bus/notices.js';
import { RedisSnapshotBus } from '../bus/redis.js';
import { RedisLeaderLease } from '../bus/redis-lease.js';
import { RedisNodeRegistry } from '../bus/redis-nodes.js';
import { RedisNotices } from '../bus/redis-notices.js';
import type { SnapshotBus } from '../bus/snapshot-bus.js';
import type { AppConfig } from '../config.js';
import type { ZoneTime } from '../domain/time.js';
import type { Logger } from '../log.js';
import type { ClusterState } from '../render/service-status.js';
import type { Role } from './role.js';


/**
 * The parts that differ between one process and many, picked from the config:
 * in-process twins without `NERKH_REDIS_URL`, Redis ones with it (src/bus/README.md).
 */
export interface Backends {
  readonly id: string;
  readonly role: Role;
  /** null without Redis. */
  readonly link: RedisLink | null;
  /** Who ingests; null for an `api` process, which never does. */
  readonly lease: LeaderLease | null;
  readonly bus: SnapshotBus;
  readonly registry: NodeRegistry;
  readonly notices: Notices;
  readonly limiter: SharedLimiter;
  readonly failedAttempts: FailedKeyThrottle;
  /** The nodes and Redis as this node sees them, this node's own entry as of now. */
  cluster(now: number): ClusterState;
  /** Connect and take part: load the latest snapshot, heartbeat, contend for the lease. Never rejects. */
  start(): Promise<void>;
  /** Hand the ingest lease over at once (the first step of a shutdown, so another node takes over while this one drains). */
  stepDown(): Promise<void>;
  /** After the last request: hand unused quota back, leave the node list, disconnect. */
  close(): Promise<void>;
}

export function openBackends(config: AppConfig, role: Role, time: ZoneTime, logger: Logger): Backends {
  const id = newNodeId();
  const link = config.redisUrl ? new RedisLink({ url: config.redisUrl, prefix: config.redisPrefix, logger }) : null;
  const lease = role === 'api' ? null : link ? new RedisLeaderLease(link, { id, logger, clock: time.clock }) : new SoleLeader(id);
  const bus: SnapshotBus = link
    ? new RedisSnapshotBus(link, { time, logger, lease: lease ?? undefined })
    : new MemorySnapshotBus((error) => logger.error({ part: 'bus', err: error }, 'a snapshot listener failed'), time.now());
  const self = () => ({ role, leader: lease?.isLeader ?? false, version: bus.latest()?.snapshot.version ?? null });
  const registry: NodeRegistry = link ? new RedisNodeRegistry(link, id, self, logger) : new SoleNode(id, self, () => time.now());
  const notices: Notices = link ? new RedisNotices(link, logger) : new LocalNotices();
  // Shares of a key's limit go to the nodes that serve: an ingest-only process answers no keyed request.
  const servingNodes = () => registry.nodes().filter((node) => node.role !== 'ingest').length;
  const serves = role !== 'ingest';
  const redisLimiter = link && serves ? new RedisLimiter(link, time, { nodes: servingNodes, logger, clock: time.clock }) : null;
  const sharedFailures = link && serves ? new SharedFailedAttempts(link, undefined, time.clock) : null;

  return {
    id,
    role,
    link,
    lease,
    bus,
    registry,
    notices,
    limiter: redisLimiter ?? new MemoryLimiter(time),
    failedAttempts: sharedFailures ?? new FailedAttempts(),
    cluster(now) {
      const own: NodeInfo = { id, ...self(), last_seen: now };
      const others = registry.nodes().filter((node) => node.id !== id);
      const nodes = [...others, own].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return { self: id, nodes, redis: link === null ? null : link.healthy ? 'active' : 'down', refusedSnapshots: bus.refused };
    },
    async start() {
      await Promise.all([bus.start(), registry.start(), notices.start()]);
      await lease?.start();
    },
    async stepDown() {
      await lease?.close();
    },
    async close() {
      await Promise.all([redisLimiter?.close(), sharedFailures?.close()]);
      await registry.close();
      await lease?.close();
      await Promise.all([bus.close(), notices.close()]);
      await link?.close();
    },
  };
}
