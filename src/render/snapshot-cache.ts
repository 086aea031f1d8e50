import { ENTRY_OVERHEAD_BYTES, stringBytes } from '../domain/cache-size.js';
import type { Snapshot } from '../live/snapshot.js';

interface ForSnapshot<V> {
  entries: number;
  bytes: number;
  byAllowance: Map<object | symbol, Map<string, V>>;
}

/**
 * Prepared responses per snapshot, per allowance, per request key, with hard
 * bounds: only the most recent snapshots (the ones refresh tiers are serving)
 * keep a cache, and each holds a limited number of entries and of bytes (the
 * key, the value's `sizeOf` and a per-entry overhead, so even an empty value
 * costs something). Past a bound a response is simply rendered again; memory
 * never grows with what clients ask.
 *
 * Nested maps rather than one LRU keyed by a joined string: a hit is three
 * map lookups and allocates nothing, and a snapshot's cache goes as a whole
 * once no tier serves it, so there is nothing to evict one by one.
 */
export class SnapshotCache<V> {
  private readonly bySnapshot = new Map<Snapshot, ForSnapshot<V>>();
  private lastUsed: Snapshot | null = null;

  constructor(
    private readonly maxEntriesPerSnapshot: number,
    private readonly maxSnapshots = 4,
    private readonly maxBytesPerSnapshot = Infinity,
    private readonly sizeOf: (value: V) => number = () => 0,
  ) {}

  /** Snapshots holding a cache now (for tests and metrics). */
  get snapshots(): number {
    return this.bySnapshot.size;
  }

  /** Entries and bytes held for `snapshot` (for tests and metrics). */
  held(snapshot: Snapshot): { entries: number; bytes: number } {
    const forSnapshot = this.bySnapshot.get(snapshot);
    return { entries: forSnapshot?.entries ?? 0, bytes: forSnapshot?.bytes ?? 0 };
  }

  /** The value kept for the key, if any: no value is made. */
  find(snapshot: Snapshot, allowance: object | symbol, key: string): V | undefined {
    return this.use(snapshot).byAllowance.get(allowance)?.get(key);
  }

  get(snapshot: Snapshot, allowance: object | symbol, key: string, make: () => V, cacheable: (value: V) => boolean = () => true): V {
    const forSnapshot = this.use(snapshot);
    let forAllowance = forSnapshot.byAllowance.get(allowance);
    let value = forAllowance?.get(key);
    if (value === undefined) {
      value = make();
      if (forSnapshot.entries < this.maxEntriesPerSnapshot && cacheable(value)) {
        const bytes = ENTRY_OVERHEAD_BYTES + stringBytes(key) + this.sizeOf(value);
        if (forSnapshot.bytes + bytes <= this.maxBytesPerSnapshot) {
          if (!forAllowance) forSnapshot.byAllowance.set(allowance, (forAllowance = new Map()));
          forAllowance.set(key, value);
          forSnapshot.entries++;
          forSnapshot.bytes += bytes;
        }
      }
    }
    return value;
  }

  /** The snapshot's cache, made if need be and marked most recently used. */
  private use(snapshot: Snapshot): ForSnapshot<V> {
    let forSnapshot = this.bySnapshot.get(snapshot);
    if (!forSnapshot) {
      forSnapshot = { entries: 0, bytes: 0, byAllowance: new Map() };
      this.bySnapshot.set(snapshot, forSnapshot);
      // Maps iterate in insertion order: the first key is the least recently used snapshot.
      if (this.bySnapshot.size > this.maxSnapshots) this.bySnapshot.delete(this.bySnapshot.keys().next().value!);
    } else if (snapshot !== this.lastUsed) {
      // Move it to the end, so snapshots that tiers keep serving are not evicted by newer ones.
      this.bySnapshot.delete(snapshot);
      this.bySnapshot.set(snapshot, forSnapshot);
    }
    this.lastUsed = snapshot;
    return forSnapshot;
  }
}
