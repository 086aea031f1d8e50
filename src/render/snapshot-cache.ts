import type { Snapshot } from '../live/snapshot.js';

/**
 * Prepared responses per snapshot, per allowance, per request key, with hard
 * bounds: only the most recent snapshots (the ones refresh tiers are serving)
 * keep a cache, and each holds a limited number of entries. Past the bound a
 * response is simply rendered again; memory never grows with what clients ask.
 */
export class SnapshotCache<V> {
  private readonly bySnapshot = new Map<Snapshot, { entries: number; byAllowance: Map<object | symbol, Map<string, V>> }>();
  private lastUsed: Snapshot | null = null;

  constructor(
    private readonly maxEntriesPerSnapshot: number,
    private readonly maxSnapshots = 4,
  ) {}

  /** Snapshots holding a cache now (for tests and metrics). */
  get snapshots(): number {
    return this.bySnapshot.size;
  }

  get(snapshot: Snapshot, allowance: object | symbol, key: string, make: () => V, cacheable: (value: V) => boolean = () => true): V {
    let forSnapshot = this.bySnapshot.get(snapshot);
    if (!forSnapshot) {
      forSnapshot = { entries: 0, byAllowance: new Map() };
      this.bySnapshot.set(snapshot, forSnapshot);
      // Maps iterate in insertion order: the first key is the least recently used snapshot.
      if (this.bySnapshot.size > this.maxSnapshots) this.bySnapshot.delete(this.bySnapshot.keys().next().value!);
    } else if (snapshot !== this.lastUsed) {
      // Move it to the end, so snapshots that tiers keep serving are not evicted by newer ones.
      this.bySnapshot.delete(snapshot);
      this.bySnapshot.set(snapshot, forSnapshot);
    }
    this.lastUsed = snapshot;
    let forAllowance = forSnapshot.byAllowance.get(allowance);
    if (!forAllowance) forSnapshot.byAllowance.set(allowance, (forAllowance = new Map()));
    let value = forAllowance.get(key);
    if (value === undefined) {
      value = make();
      if (forSnapshot.entries < this.maxEntriesPerSnapshot && cacheable(value)) {
        forAllowance.set(key, value);
        forSnapshot.entries++;
      }
    }
    return value;
  }
}
