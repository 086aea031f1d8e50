import type { KnownValue } from '../domain/resolve.js';
import type { Snapshot } from '../live/snapshot.js';
import type { SourceHealth } from '../sources/monitor.js';

/**
 * What the ingest leader shares with every node: the snapshot, the leader's
 * view of its sources (for `/v1/status` on any node), and its stale-fallback
 * memory, so that a new leader continues serving the same last known values.
 */
export interface SharedSnapshot {
  readonly snapshot: Snapshot;
  readonly health: readonly SourceHealth[];
  readonly lastKnown: ReadonlyMap<string, KnownValue>;
  /** The id of the node that built it. */
  readonly leader: string;
}

/**
 * Snapshot fan-out. The ingest leader publishes; every node (the leader too)
 * serves what `subscribe` delivers. Versions are assigned at publish and only
 * ever grow: a subscriber is handed every newer snapshot and never an older one.
 */
export interface SnapshotBus {
  /** Load the latest snapshot (a starting node is ready at once) and listen for newer ones. Never rejects. */
  start(): Promise<void>;
  /**
   * Publish what the leader built; `snapshot.version` is replaced by the bus's
   * version. Resolves to what was delivered, or null when refused (this node no
   * longer holds the leader lease, or Redis is unreachable). Never rejects.
   */
  publish(shared: SharedSnapshot): Promise<SharedSnapshot | null>;
  /** The newest snapshot this node holds, or null before the first. */
  latest(): SharedSnapshot | null;
  /** Listen for every newer snapshot; returns the unsubscribe function. */
  subscribe(listener: (shared: SharedSnapshot) => void): () => void;
  /** False while the bus cannot reach its backend (the status page shows it). */
  readonly healthy: boolean;
  /** Messages refused since start: not a snapshot, or a field failing its check (only a bus fed by other processes has any). */
  readonly refused: number;
  close(): Promise<void>;
}

/**
 * What every bus keeps: the newest snapshot this node holds and who is to
 * hear of newer ones.
 */
export abstract class SnapshotHolder {
  protected current: SharedSnapshot | null = null;
  protected readonly listeners = new Set<(shared: SharedSnapshot) => void>();

  latest(): SharedSnapshot | null {
    return this.current;
  }

  subscribe(listener: (shared: SharedSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keep `shared` as the newest and hand it to each listener; one failing listener never keeps the others from their snapshot. */
  protected hold(shared: SharedSnapshot, onError: (error: unknown) => void): void {
    this.current = shared;
    for (const listener of this.listeners) {
      try {
        listener(shared);
      } catch (error) {
        onError(error);
      }
    }
  }
}
