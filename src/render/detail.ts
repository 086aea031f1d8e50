import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf, fnv1a } from '../domain/hash.js';
import { ApiError } from '../domain/errors.js';
import type { Snapshot } from '../live/snapshot.js';
import { SnapshotCache } from './snapshot-cache.js';
import { MAX_KEYS, parseKeyList } from './keys.js';

export interface Rendered {
  body: string | Buffer;
  etag: string;
}

/**
 * The detail response for a keys segment: aliases resolved to canonical keys,
 * request order, each reference once, unknown and not-allowed keys listed in
 * `meta`. Only string concatenation of rates serialised when the snapshot was built.
 */
export function renderDetail(
  snapshot: Snapshot,
  catalogue: Catalogue,
  segment: string,
  allowance: ReadonlySet<string> | null,
  generatedAt: string,
): { body: string; etag: string; namesUnknownKeys: boolean } {
  const requested = parseKeyList(segment);
  const unknown: string[] = [];
  const denied: string[] = [];
  const included = new Set<string>();
  const refused = new Set<string>();
  let rates = '';
  let hash = fnv1a(segment);
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
    rates += rates === '' ? prepared.json : ',' + prepared.json;
    hash = combineHash(hash, prepared.hash);
  }
  if (included.size === 0) {
    if (denied.length > 0) throw new ApiError('REFERENCE_NOT_IN_PLAN');
    throw new ApiError('RATE_NOT_FOUND', `No active reference matches ${unknown.map((k) => JSON.stringify(k)).join(', ')}.`);
  }
  hash = combineHash(hash, denied.length);
  const body =
    `${HEAD}${generatedAt}","count":${included.size},"rates":[${rates}]` +
    `,"meta":{"max_keys":${MAX_KEYS},"includes_prices":true,"unknown_keys":${JSON.stringify(unknown)},"denied_keys":${JSON.stringify(denied)}}}`;
  return { body, etag: etagOf('d', hash), namesUnknownKeys: unknown.length > 0 };
}

const HEAD = '{"success":true,"status":"ok","generated_at":"';
/** Per snapshot; ~5 KB each. */
const MAX_CACHED_RESPONSES = 2_000;
const EVERY_REFERENCE = Symbol('every reference');

/** A detail response ready to write but for its `generated_at`. */
export interface PreparedDetail {
  body: StampedBody;
  etag: string;
}

/**
 * Detail responses cached per snapshot, allowance and keys segment: a board
 * polling the same keys costs a few map lookups per request until the snapshot
 * it sees changes. Failures are not cached (they throw).
 */
export class DetailRenderer {
  private readonly cache = new SnapshotCache<PreparedDetail & { namesUnknownKeys: boolean }>(MAX_CACHED_RESPONSES);

  constructor(private readonly catalogue: Catalogue) {}

  prepare(snapshot: Snapshot, segment: string, allowance: ReadonlySet<string> | null): PreparedDetail {
    return this.cache.get(
      snapshot,
      allowance ?? EVERY_REFERENCE,
      segment,
      () => {
        const { body, etag, namesUnknownKeys } = renderDetail(snapshot, this.catalogue, segment, allowance, '');
        return { body: new StampedBody(Buffer.from(body.slice(HEAD.length))), etag, namesUnknownKeys };
      },
      // Answers naming unknown keys are not kept: any string is an unknown key.
      (prepared) => !prepared.namesUnknownKeys,
    );
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
 */
export class StampedBody {
  private stamp: string | null = null;
  private whole: Buffer = EMPTY_BUFFER;

  /** `tail`: everything after the generated_at value, UTF-8 encoded. */
  constructor(private readonly tail: Buffer) {}

  /** `extra` follows the time in the head and must change only with it (the legacy feed's server_time). */
  at(generatedAt: string, extra = ''): Buffer {
    if (generatedAt !== this.stamp) {
      const head = HEAD + generatedAt + extra;
      const whole = Buffer.allocUnsafeSlow(head.length + this.tail.length);
      whole.write(head, 0, 'latin1');
      this.tail.copy(whole, head.length);
      this.whole = whole;
      this.stamp = generatedAt;
    }
    return this.whole;
  }
}

const EMPTY_BUFFER = Buffer.alloc(0);
