import type { Catalogue } from '../../../catalogue/catalogue.js';
import { combineHash, etagOf, fnv1a } from '../../../domain/hash.js';
import { ApiError } from '../../../domain/errors.js';
import type { RateTime } from '../../../domain/rate.js';
import { DEFAULT_RATE_UNIT, type RateUnit } from '../../../domain/units.js';
import { preparedIn } from '../../../live/prepare.js';
import type { Snapshot } from '../../../live/snapshot.js';
import { describeSources, withSources } from '../../../live/source-report.js';
import { OK_HEAD, okHead } from '../../../render/envelope.js';
import { StampedBody } from '../../../render/stamped-body.js';
import { SnapshotCache } from '../../../render/snapshot-cache.js';
import { MAX_KEYS, normalKeyList, parseKeyList } from '../../../render/reference-keys.js';

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
