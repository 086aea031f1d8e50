import { ApiError } from '../domain/errors.js';
import type { Snapshot } from './snapshot.js';

/** What a node shows before it holds any snapshot: no rates, version 0. */
const NONE: Snapshot = { version: 0, builtAt: 0, rates: new Map(), lastUpdate: null, counts: { ok: 0, stale: 0, unavailable: 0 } };

/**
 * Recent snapshots, so each refresh tier can be shown the snapshot as of the
 * last wall-clock multiple of its interval. A caller on a 60 s plan sees what
 * was current at 12:01:00 until 12:02:00, whatever changed in between.
 */
export class RefreshTiers {
  private snapshots: Snapshot[];
  private readonly tiers = new Map<number, { boundary: number; snapshot: Snapshot }>();
  private readonly keepMs: number;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();

  /** `initial` null: a node that has received nothing yet, which answers 503 until the first `push`. */
  constructor(initial: Snapshot | null, longestIntervalSeconds: number) {
    this.snapshots = initial ? [initial] : [];
    this.keepMs = Math.max(1, longestIntervalSeconds) * 1000;
  }

  /** Whether any snapshot has arrived (a node is ready only then). */
  get held(): boolean {
    return this.snapshots.length > 0;
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

  /** The newest snapshot; an empty one (version 0) before any arrived. */
  latest(): Snapshot {
    return this.snapshots[this.snapshots.length - 1] ?? NONE;
  }

  /** The snapshot a caller with this refresh interval sees now; 0 means live. */
  forInterval(intervalSeconds: number, now: number): Snapshot {
    if (this.snapshots.length === 0) throw new ApiError('SERVICE_UNAVAILABLE', 'No rate data has been received yet; retry shortly.', { 'retry-after': '1' });
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
