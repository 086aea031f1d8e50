import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

/**
 * Which node is the ingest leader. Among `all`/`ingest` processes exactly one
 * holds the lease; it reads the sources and publishes snapshots, fenced by
 * `token` so that a leader that paused and lost the lease can never publish
 * over its successor.
 */
export interface LeaderLease {
  /** This node's id. */
  readonly id: string;
  readonly isLeader: boolean;
  /** The leader's id as last seen (this node's own while it leads); null when none is known. */
  readonly leaderId: string | null;
  /** The fencing token while this node leads, else null; the bus's publish checks it. */
  readonly token: string | null;
  /** False while the lease cannot be checked (Redis unreachable). */
  readonly healthy: boolean;
  /**
   * Never take the lease with an epoch at or below `fence` (the newest epoch
   * that wrote history), and give up a lease held with a lower one. Called with the store's fence at start (a Redis that
   * lost its epoch counter must not hand out old epochs) and when a history
   * write is refused.
   */
  respectFence(fence: number): Promise<void>;
  /** Hear of every gain (true) and loss (false) of the lease. */
  onChange(listener: (isLeader: boolean) => void): () => void;
  /** Try once to take the lease, then keep trying (or renewing) in the background. Never rejects. */
  start(): Promise<void>;
  /** Stop, handing the lease over at once if held. */
  close(): Promise<void>;
}

/** The epoch in a fencing token `<node id>#<epoch>`; null for a token without one (the single process's). */
export function epochOf(token: string | null): number | null {
  if (token === null) return null;
  const separator = token.lastIndexOf('#');
  if (separator === -1) return null;
  const epoch = Number(token.slice(separator + 1));
  return Number.isSafeInteger(epoch) ? epoch : null;
}

/** A node id that is unique per process and readable on the status page: host, pid and a random tail. */
export function newNodeId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** The embedded twin: a single process always leads. */
export class SoleLeader implements LeaderLease {
  readonly isLeader = true;
  readonly token = 'sole';
  readonly healthy = true;

  constructor(readonly id: string = newNodeId()) {}

  get leaderId(): string {
    return this.id;
  }

  onChange(): () => void {
    return () => {};
  }

  /** A single process writes unfenced (its token has no epoch), so nothing is ever refused. */
  async respectFence(): Promise<void> {}

  async start(): Promise<void> {}

  async close(): Promise<void> {}
}
