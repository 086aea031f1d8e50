import type { Snapshot } from './snapshot.js';

/**
 * Recent snapshots, so each refresh tier can be shown the snapshot as of the
 * last wall-clock multiple of its interval. A caller on a 60 s plan sees what
 * was current at 12:01:00 until 12:02:00, whatever changed in between.
 */
export class SnapshotHistory {
  private snapshots: Snapshot[];
  private readonly tiers = new Map<number, { boundary: number; snapshot: Snapshot }>();
  private readonly keepMs: number;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();

  constructor(initial: Snapshot, longestIntervalSeconds: number) {
    this.snapshots = [initial];
    this.keepMs = Math.max(1, longestIntervalSeconds) * 1000;
  }

  push(snapshot: Snapshot): void {
    this.snapshots.push(snapshot);
    // Keep what any tier can still see: everything inside the longest interval, plus the one before it.
    const horizon = snapshot.builtAt - this.keepMs;
    let first = 0;
    while (first + 1 < this.snapshots.length && this.snapshots[first + 1]!.builtAt <= horizon) first++;
    if (first > 0) this.snapshots = this.snapshots.slice(first);
    this.tiers.clear();
    for (const listener of this.listeners) listener(snapshot);
  }

  /** Called after every push, once the snapshot is visible here; returns the unsubscribe. */
  onPush(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  latest(): Snapshot {
    return this.snapshots[this.snapshots.length - 1]!;
  }

  /** The snapshot a caller with this refresh interval sees now; 0 means live. */
  forInterval(intervalSeconds: number, now: number): Snapshot {
    if (intervalSeconds <= 0) return this.latest();
    const intervalMs = intervalSeconds * 1000;
    const boundary = now - (now % intervalMs);
    const cached = this.tiers.get(intervalSeconds);
    if (cached && cached.boundary === boundary) return cached.snapshot;
    let snapshot = this.snapshots[0]!;
    for (let i = this.snapshots.length - 1; i >= 0; i--) {
      if (this.snapshots[i]!.builtAt <= boundary) {
        snapshot = this.snapshots[i]!;
        break;
      }
    }
    this.tiers.set(intervalSeconds, { boundary, snapshot });
    return snapshot;
  }
}
