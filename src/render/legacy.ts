import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf } from '../domain/hash.js';
import type { Snapshot } from '../live/snapshot.js';
import { StampedBody, type Rendered } from './detail.js';

const EVERYTHING = Symbol('every reference');

/**
 * The legacy per-user feed: the account's whole allowance, flat, keyed by
 * reference key. The joined entries are cached per snapshot and allowance,
 * so a board polling every few seconds costs one concatenation per new snapshot.
 */
export class LegacyRenderer {
  private readonly cache = new WeakMap<Snapshot, Map<ReadonlySet<string> | symbol, { body: StampedBody; hash: number }>>();

  constructor(private readonly catalogue: Catalogue) {}

  render(snapshot: Snapshot, allowance: ReadonlySet<string> | null, generatedAt: string, now: number): Rendered {
    const { body, hash } = this.entries(snapshot, allowance);
    // server_time moves with generated_at (both to the second), so it belongs in the head.
    return { body: body.at(generatedAt, `","server_time":${Math.floor(now / 1000)}`), etag: etagOf('w', hash) };
  }

  private entries(snapshot: Snapshot, allowance: ReadonlySet<string> | null) {
    let perSnapshot = this.cache.get(snapshot);
    if (!perSnapshot) this.cache.set(snapshot, (perSnapshot = new Map()));
    const id = allowance ?? EVERYTHING;
    let cached = perSnapshot.get(id);
    if (!cached) {
      const keys = allowance ?? this.catalogue.references.map((reference) => reference.key);
      let inner = '';
      let hash = 0x811c9dc5;
      for (const key of keys) {
        const prepared = snapshot.rates.get(key);
        if (!prepared) continue;
        inner += `,${JSON.stringify(key)}:${prepared.legacy}`;
        hash = combineHash(hash, prepared.hash);
      }
      cached = { body: new StampedBody(Buffer.from(`${inner}}`)), hash };
      perSnapshot.set(id, cached);
    }
    return cached;
  }
}
