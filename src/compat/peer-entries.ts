import type { Catalogue } from '../catalogue/catalogue.js';
import type { Rate, RateTime } from '../domain/rate.js';
import type { PreparedRate } from '../live/snapshot.js';
import { SnapshotCache } from '../render/snapshot-cache.js';
import type { PeerAnswer } from './peer-answer.js';
import { bindPeerMap, type Mapped, type PeerMap } from './peers.js';

const SNAPSHOTS_KEPT = 4;

/**
 * What each peer's answer is made from: the peer's names bound to the
 * catalogue, its answers kept per snapshot within `bounds`, and each rate's
 * entry written once per name (a rate is shared by every snapshot it did not
 * change in, and goes with them).
 */
export abstract class PeerEntries<E extends { reference: string; divisor: string }, A extends PeerAnswer> {
  readonly map: PeerMap<E>;
  protected readonly cache: SnapshotCache<A>;
  private readonly written = new WeakMap<PreparedRate, Map<string, string>>();

  constructor(
    catalogue: Catalogue,
    protected readonly time: RateTime,
    entries: readonly E[],
    nameOf: (entry: E) => string,
    bounds: { entries: number; bytes: number },
  ) {
    this.map = bindPeerMap(entries, catalogue, nameOf);
    this.cache = new SnapshotCache<A>(bounds.entries, SNAPSHOTS_KEPT, bounds.bytes, (answer) => answer.body.size + 64 * answer.headers.length);
  }

  /** A rate's entry under one mapped name, written on first use. */
  protected entry(prepared: PreparedRate, mapped: Mapped<E>): string {
    let byName = this.written.get(prepared);
    if (byName === undefined) this.written.set(prepared, (byName = new Map()));
    let entry = byName.get(mapped.name);
    if (entry === undefined) {
      entry = this.write(prepared.rate, mapped);
      byName.set(mapped.name, entry);
    }
    return entry;
  }

  /** The entry as the peer writes it, for a rate with a value and a time. */
  protected abstract write(rate: Rate, mapped: Mapped<E>): string;
}
