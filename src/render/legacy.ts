import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf } from '../domain/hash.js';
import { DEFAULT_RATE_UNIT, type RateUnit } from '../domain/units.js';
import { preparedIn } from '../live/prepare.js';
import type { Snapshot } from '../live/snapshot.js';
import { StampedBody, type Rendered } from './detail.js';
import { SnapshotCache } from './snapshot-cache.js';

const EVERYTHING = Symbol('every reference');

/**
 * The legacy per-user feed: the account's whole allowance, flat, keyed by
 * reference key. The joined entries are cached per snapshot, allowance and unit,
 * so a board polling every few seconds costs one concatenation per new snapshot.
 */
export class LegacyRenderer {
  /** Per snapshot; an entry is the whole allowance (tens of KB), so few are kept. */
  private readonly cache = new SnapshotCache<{ body: StampedBody; hash: number }>(200);

  constructor(private readonly catalogue: Catalogue) {}

  render(snapshot: Snapshot, allowance: ReadonlySet<string> | null, generatedAt: string, now: number, unit: RateUnit = DEFAULT_RATE_UNIT): Rendered {
    const { body, hash } = this.entries(snapshot, allowance, unit);
    // server_time moves with generated_at (both to the second), so it belongs in the head.
    return { body: body.at(generatedAt, `","server_time":${Math.floor(now / 1000)}`), etag: etagOf(unit === 'toman' ? 'wt' : 'w', hash), stamped: body };
  }

  private entries(snapshot: Snapshot, allowance: ReadonlySet<string> | null, unit: RateUnit) {
    return this.cache.get(snapshot, allowance ?? EVERYTHING, unit, () => {
      const keys = allowance ?? this.catalogue.references.map((reference) => reference.key);
      let inner = '';
      let hash = 0x811c9dc5;
      for (const key of keys) {
        const found = snapshot.rates.get(key);
        if (!found) continue;
        const prepared = preparedIn(found, unit);
        inner += `,${JSON.stringify(key)}:${prepared.legacy}`;
        hash = combineHash(hash, prepared.hash);
      }
      return { body: new StampedBody(Buffer.from(`${inner}}`)), hash };
    });
  }
}
