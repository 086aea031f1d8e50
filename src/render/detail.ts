import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf, fnv1a } from '../domain/hash.js';
import { ApiError } from '../domain/errors.js';
import type { RateTime } from '../domain/rate.js';
import { DEFAULT_RATE_UNIT, type RateUnit } from '../domain/units.js';
import { preparedIn } from '../live/prepare.js';
import type { Snapshot } from '../live/snapshot.js';
import { describeSources, withSources } from '../live/source-report.js';
import { compress, MIN_COMPRESSED_BYTES, SplicedGzip, type Encoding } from './compression.js';
import { OK_HEAD, okHead } from './envelope.js';
import { SnapshotCache } from './snapshot-cache.js';
import { MAX_KEYS, normalKeyList, parseKeyList } from './reference-keys.js';

export interface Rendered {
  body: string | Buffer;
  etag: string;
  /** The prepared body `body` was stamped from, when it can give compressed forms of it. */
  stamped?: StampedBody;
}

/** How the rates of a detail answer are shown: in which unit, and whether each lists its sources (their times written with `time`). */
export type DetailView = { unit: RateUnit; sources: false } | { unit: RateUnit; sources: true; time: RateTime };

export const PLAIN_VIEW: DetailView = { unit: DEFAULT_RATE_UNIT, sources: false };

/**
 * The detail response for a keys segment: aliases resolved to canonical keys,
 * request order, each reference once, unknown and not-allowed keys listed in
 * `meta`. Only string concatenation of rates serialised when the snapshot was
 * built (in toman: serialised on first use of each rate); the sources of an
 * expanded view are described here, so only expanded answers pay for them.
 */
export function renderDetail(
  snapshot: Snapshot,
  catalogue: Catalogue,
  segment: string,
  allowance: ReadonlySet<string> | null,
  generatedAt: string,
  view: DetailView = PLAIN_VIEW,
): { body: string; etag: string; namesUnknownKeys: boolean } {
  const requested = parseKeyList(segment);
  const unknown: string[] = [];
  const denied: string[] = [];
  const included = new Set<string>();
  const refused = new Set<string>();
  let rates = '';
  let hash = combineHash(fnv1a(segment), viewIndex(view));
  for (const name of requested) {
    const reference = catalogue.lookup(name);
    if (!reference) {
      unknown.push(name);
      continue;
    }
    if (allowance !== null && !allowance.has(reference.key)) {
      if (!refused.has(reference.key)) denied.push(name);
      refused.add(reference.key);
      continue;
    }
    const prepared = snapshot.rates.get(reference.key);
    if (!prepared || included.has(reference.key)) continue;
    included.add(reference.key);
    const shown = preparedIn(prepared, view.unit);
    let json = shown.json;
    if (view.sources) {
      json = withSources(json, shown.rate, describeSources(reference, prepared.rate, snapshot), view.time, view.unit);
      hash = combineHash(hash, fnv1a(json));
    } else hash = combineHash(hash, shown.hash);
    rates += rates === '' ? json : ',' + json;
  }
  if (included.size === 0) {
    if (denied.length > 0) throw new ApiError('REFERENCE_NOT_IN_PLAN');
    throw new ApiError('RATE_NOT_FOUND', `No active reference matches ${unknown.map((k) => JSON.stringify(k)).join(', ')}.`);
  }
  hash = combineHash(hash, denied.length);
  const body =
    `${okHead(generatedAt)},"count":${included.size},"rates":[${rates}]` +
    `,"meta":{"max_keys":${MAX_KEYS},"includes_prices":true,"unknown_keys":${JSON.stringify(unknown)},"denied_keys":${JSON.stringify(denied)}}}`;
  return { body, etag: etagOf('d', hash), namesUnknownKeys: unknown.length > 0 };
}

/** 0 for the plain view (rial, no sources), so its ETags are those of plain answers. */
function viewIndex(view: DetailView): number {
  return indexOfView(view.unit, view.sources);
}

function indexOfView(unit: RateUnit, sources: boolean): number {
  return (unit === 'toman' ? 1 : 0) + (sources ? 2 : 0);
}

/** Per snapshot and view: answers of a few keys (~1–5 KB each, with their compressed forms). */
const PLAIN_BOUNDS = { entries: 2_000, bytes: 4 * 1024 * 1024 };
/** Expanded answers are larger and rarer. */
const EXPANDED_BOUNDS = { entries: 200, bytes: 2 * 1024 * 1024 };
/** A cache per view (see viewIndex) holds the answers of the last few snapshots, so at most 4 × (4 + 4 + 2 + 2) MB in all. */
const SNAPSHOTS_KEPT = 4;
const EVERY_REFERENCE = Symbol('every reference');

/** A detail response ready to write but for its `generated_at`. */
export interface PreparedDetail {
  body: StampedBody;
  etag: string;
}

type CachedDetail = PreparedDetail & { namesUnknownKeys: boolean };

/**
 * Detail responses cached per snapshot, view, allowance and key list: a
 * board polling the same keys costs a few map lookups per request until the
 * snapshot it sees changes. Failures are not cached (they throw).
 *
 * Answers are kept under the key list as the answer reads it (keys trimmed,
 * lower-cased, each once, in request order: `usd,eur`), never under the raw
 * segment, which may be any of countless spellings of the same list up to the
 * URL's length. A segment already in that form (what clients send) is looked
 * up as it is, with nothing parsed or made; any other is parsed first.
 */
export class DetailRenderer {
  /** One cache per view: rial, toman, and each with sources (see viewIndex). */
  private readonly caches = [PLAIN_BOUNDS, PLAIN_BOUNDS, EXPANDED_BOUNDS, EXPANDED_BOUNDS].map(
    (bounds) => new SnapshotCache<CachedDetail>(bounds.entries, SNAPSHOTS_KEPT, bounds.bytes, (prepared) => prepared.body.size),
  );
  private readonly views: DetailView[];

  constructor(
    private readonly catalogue: Catalogue,
    time: RateTime,
  ) {
    this.views = [PLAIN_VIEW, { unit: 'toman', sources: false }, { unit: 'rial', sources: true, time }, { unit: 'toman', sources: true, time }];
  }

  prepare(snapshot: Snapshot, segment: string, allowance: ReadonlySet<string> | null, unit: RateUnit = DEFAULT_RATE_UNIT, sources = false): PreparedDetail {
    const index = indexOfView(unit, sources);
    const cache = this.caches[index]!;
    const kept = cache.find(snapshot, allowance ?? EVERY_REFERENCE, segment);
    return kept ?? this.prepareAnew(cache, snapshot, normalKeyList(segment), allowance, this.views[index]!);
  }

  /** `keys`: the segment in normal form (see normalKeyList), so every spelling of a list shares one entry and one ETag. */
  private prepareAnew(cache: SnapshotCache<CachedDetail>, snapshot: Snapshot, keys: string, allowance: ReadonlySet<string> | null, view: DetailView): CachedDetail {
    return cache.get(
      snapshot,
      allowance ?? EVERY_REFERENCE,
      keys,
      () => {
        const { body, etag, namesUnknownKeys } = renderDetail(snapshot, this.catalogue, keys, allowance, '', view);
        return { body: new StampedBody(Buffer.from(body.slice(OK_HEAD.length))), etag, namesUnknownKeys };
      },
      // Answers naming unknown keys are not kept: any string is an unknown key.
      (prepared) => !prepared.namesUnknownKeys,
    );
  }

  /** Answers and bytes held for `snapshot`, every view together (for tests and metrics). */
  held(snapshot: Snapshot): { entries: number; bytes: number } {
    const held = { entries: 0, bytes: 0 };
    for (const cache of this.caches) {
      const { entries, bytes } = cache.held(snapshot);
      held.entries += entries;
      held.bytes += bytes;
    }
    return held;
  }

  render(snapshot: Snapshot, segment: string, allowance: ReadonlySet<string> | null, generatedAt: string): { body: Buffer; etag: string } {
    const { body, etag } = this.prepare(snapshot, segment, allowance);
    return { body: body.at(generatedAt), etag };
  }
}

/**
 * A response body prepared ahead of time but for its head,
 * `{"success":true,"status":"ok","generated_at":"<time>`. Times are to the
 * second, so the whole body is put together once a second and the same bytes
 * serve every request in that second: no allocation, no copy per request.
 * Its compressed forms follow the same rule: made on the first request that
 * asks for one in a second, then served to every other; gzip's costly part,
 * the tail, is deflated only once for the body's whole life.
 */
export class StampedBody {
  private stamp: string | null = null;
  private head: Buffer = EMPTY_BUFFER;
  private whole: Buffer = EMPTY_BUFFER;
  private gzip: Buffer | null = null;
  private br: Buffer | null = null;
  /** The tail deflated once, on the first request for gzip: each second adds only its head. */
  private gzipTail: SplicedGzip | null = null;

  /** `tail`: everything after the generated_at value, UTF-8 encoded. */
  constructor(private readonly tail: Buffer) {}

  /** `extra` follows the time in the head and must change only with it (the webservice feed's server_time). */
  at(generatedAt: string, extra = ''): Buffer {
    if (generatedAt !== this.stamp) {
      const head = OK_HEAD + generatedAt + extra;
      const whole = Buffer.allocUnsafeSlow(head.length + this.tail.length);
      whole.write(head, 0, 'latin1');
      this.tail.copy(whole, head.length);
      this.whole = whole;
      this.head = whole.subarray(0, head.length);
      this.stamp = generatedAt;
      this.gzip = null;
      this.br = null;
    }
    return this.whole;
  }

  /**
   * Bytes held at most, about: the tail, the stamped whole, and once asked
   * for, the compressed forms (gzip's deflated tail and stamped form, and
   * brotli's; JSON compresses to a third or less, so the three stay under
   * the tail's size). For caches bounded by size.
   */
  get size(): number {
    return OK_HEAD.length + this.tail.length * (this.compressible ? 3 : 2);
  }

  /** Whether the body is worth compressing (decided on its tail, so before any stamp). */
  get compressible(): boolean {
    return this.tail.length + OK_HEAD.length > MIN_COMPRESSED_BYTES;
  }

  /** The body last returned by `at`, compressed; null when it is too small to be worth it. */
  encoded(encoding: Encoding): Buffer | null {
    if (!this.compressible) return null;
    if (encoding === 'gzip') return (this.gzip ??= (this.gzipTail ??= new SplicedGzip(this.tail)).with(this.head));
    return (this.br ??= compress(this.whole, 'br'));
  }
}

const EMPTY_BUFFER = Buffer.alloc(0);
