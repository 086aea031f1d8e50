import { SnapshotHolder, type SharedSnapshot, type SnapshotBus } from './snapshot-bus.js';

/**
 * The embedded bus: one process is its own leader and only subscriber, so a
 * publish is a hand-over in memory.
 */
export class MemorySnapshotBus extends SnapshotHolder implements SnapshotBus {
  readonly healthy = true;
  /** It only ever holds what this process built. */
  readonly refused = 0;

  /**
   * `onListenerError` hears of a listener that threw (the others still get the snapshot).
   * `firstVersion` is where versions start: the start time in milliseconds keeps them
   * growing across restarts (stream ids, ETags) with nothing stored, as at most one
   * snapshot is built a second.
   */
  constructor(
    private readonly onListenerError: (error: unknown) => void,
    private readonly firstVersion = 1,
  ) {
    super();
  }

  async start(): Promise<void> {}

  async publish(shared: SharedSnapshot): Promise<SharedSnapshot> {
    const version = Math.max((this.current?.snapshot.version ?? 0) + 1, this.firstVersion);
    const delivered = { ...shared, snapshot: { ...shared.snapshot, version } };
    this.hold(delivered, this.onListenerError);
    return delivered;
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
