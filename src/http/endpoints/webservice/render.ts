import type { Catalogue } from '../../../catalogue/catalogue.js';
import { combineHash, etagOf } from '../../../domain/hash.js';
import { DEFAULT_RATE_UNIT, type RateUnit } from '../../../domain/units.js';
import { preparedIn } from '../../../live/prepare.js';
import type { Snapshot } from '../../../live/snapshot.js';
import { StampedBody, type Rendered } from '../../../render/stamped-body.js';
import { SnapshotCache } from '../../../render/snapshot-cache.js';

const EVERYTHING = Symbol('every reference');

/**
 * The webservice answer: the account's whole allowance, flat, keyed by
 * reference key. The joined entries are cached per snapshot, allowance and unit,
 * so a board polling every few seconds costs one concatenation per new snapshot.
 */
export class WebserviceRenderer {
  /** Per snapshot; an entry is the whole allowance (tens of KB), so few are kept: at most 200, or 8 MB, for each of the last 4 snapshots. */
  private readonly cache = new SnapshotCache<EntryList>(200, 4, 8 * 1024 * 1024, (entry) => entry.body.size);
  /** `server_time` of the last second asked, so a request in the same second builds no string. */
  private serverSecond = -1;
  private serverTime = '';

  constructor(private readonly catalogue: Catalogue) {}

  /**
   * The answer as of `now`; `maxAgeSeconds` is carried into the answer as given, so
   * the caller adds nothing to it. A board polling the same list allocates only
   * the answer itself: the entry, its ETag and the `server_time` text are kept.
   */
  render(snapshot: Snapshot, allowance: ReadonlySet<string> | null, generatedAt: string, now: number, unit: RateUnit = DEFAULT_RATE_UNIT, maxAgeSeconds = 0): RenderedEntries {
    const list = this.cache.find(snapshot, allowance ?? EVERYTHING, unit) ?? this.entries(snapshot, allowance, unit);
    const second = Math.floor(now / 1000);
    if (second !== this.serverSecond) {
      this.serverSecond = second;
      this.serverTime = `","server_time":${second}`;
    }
    // server_time moves with generated_at (both to the second), so it belongs in the head.
    return { body: list.body.at(generatedAt, this.serverTime), etag: list.etag, stamped: list.body, maxAgeSeconds };
  }

  private entries(snapshot: Snapshot, allowance: ReadonlySet<string> | null, unit: RateUnit): EntryList {
    return this.cache.get(snapshot, allowance ?? EVERYTHING, unit, () => {
      const keys = allowance ?? this.catalogue.references.map((reference) => reference.key);
      let inner = '';
      let hash = 0x811c9dc5;
      for (const key of keys) {
        const found = snapshot.rates.get(key);
        if (!found) continue;
        const prepared = preparedIn(found, unit);
        inner += `,${JSON.stringify(key)}:${prepared.webservice}`;
        hash = combineHash(hash, prepared.hash);
      }
      return { body: new StampedBody(Buffer.from(`${inner}}`)), etag: etagOf(unit === 'toman' ? 'wt' : 'w', hash) };
    });
  }
}

/** One allowance's webservice entries in one unit, for one snapshot. */
interface EntryList {
  body: StampedBody;
  etag: string;
}

/** The webservice answer, with how long the caller may keep it. */
export interface RenderedEntries extends Rendered {
  stamped: StampedBody;
  maxAgeSeconds: number;
}
