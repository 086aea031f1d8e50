import { LRUCache } from 'lru-cache';
import type { Catalogue } from '../../../catalogue/catalogue.js';
import { detached, ENTRY_OVERHEAD_BYTES, stringBytes } from '../../../domain/cache-size.js';
import { combineHash, etagOf, fnv1a } from '../../../domain/hash.js';
import type { Category, Reference } from '../../../domain/reference.js';
import { parseQuery } from '../../../domain/search.js';
import { StampedBody } from '../../../render/stamped-body.js';

/** What a catalogue request filters on; absent fields do not filter. */
export interface CatalogueFilter {
  category?: Category;
  q?: string;
  /** true: only references inside the caller's allowance; false: only those outside it. */
  inPlan?: boolean;
}

interface Entry {
  reference: Reference;
  /** The reference's JSON with `in_plan` either way, and their fingerprints. */
  inPlan: string;
  notInPlan: string;
  inPlanHash: number;
  notInPlanHash: number;
}

/** A listing ready to send but for its time: `","count":…,"references":[…]}` encoded once, stamped once a second. */
export interface Listing {
  etag: string;
  body: StampedBody;
}

export interface ListingBounds {
  maxBytes: number;
  maxListings: number;
}

/**
 * Listings kept: 16 MB (the full catalogue is about 130 KB, its compressed
 * forms about 35 KB more), and at most 2,000 of them, so searches matching
 * little (a listing of a few bytes each) cannot make up the bytes in count.
 */
const BOUNDS: ListingBounds = { maxBytes: 16 * 1024 * 1024, maxListings: 2_000 };
const EVERY_REFERENCE = 0;

/**
 * The catalogue response. Each reference is serialised once at start-up, both
 * ways for `in_plan`; a listing (allowance × filter) is joined on first use
 * and kept, so a request adds only the envelope. Allowances are shared by
 * every account with the same plan and selection (see the directory), so
 * there are few of them.
 */
export class CatalogueRenderer {
  private readonly entries: Entry[];
  private readonly byKey: Map<string, Entry>;
  private readonly listings: LRUCache<string, Listing>;
  private readonly allowanceIds = new WeakMap<ReadonlySet<string>, number>();
  private nextAllowanceId = EVERY_REFERENCE + 1;
  /** The listing id of each allowance without a filter (what boards poll), made once: such a request builds no string. */
  private readonly plainIds = new WeakMap<ReadonlySet<string>, string>();
  private readonly plainIdOfEverything = `${EVERY_REFERENCE}|||`;

  constructor(
    private readonly catalogue: Catalogue,
    bounds: ListingBounds = BOUNDS,
  ) {
    // A listing costs its body, its key (the normalised search text included) and the entry itself.
    this.listings = new LRUCache({ max: bounds.maxListings, maxSize: bounds.maxBytes, sizeCalculation: (listing, id) => ENTRY_OVERHEAD_BYTES + stringBytes(id) + listing.body.size });
    this.entries = catalogue.references.map((reference) => {
      // The sanity band (min, max) is internal: it screens sources and never reaches a client.
      const open = JSON.stringify({
        key: reference.key,
        title: reference.title,
        title_en: reference.title_en,
        description: reference.description,
        unit: reference.unit,
        currency: reference.currency,
        per: reference.per,
        category: reference.category,
        source_key: reference.source_key,
        aliases: reference.aliases.join(','),
        status: reference.status,
      }).slice(0, -1);
      const inPlan = `${open},"in_plan":true}`;
      const notInPlan = `${open},"in_plan":false}`;
      return { reference, inPlan, notInPlan, inPlanHash: fnv1a(inPlan), notInPlanHash: fnv1a(notInPlan) };
    });
    this.byKey = new Map(this.entries.map((entry) => [entry.reference.key, entry]));
  }

  /** Listings and bytes held now (for tests and metrics). */
  get held(): { listings: number; bytes: number } {
    return { listings: this.listings.size, bytes: this.listings.calculatedSize };
  }

  /**
   * `allowance`: the caller's references, null for every one. Kept by the
   * filter as it matches (`q` as its folded words: `  Dollar `, `dollar`,
   * `بیت‌کوین` and `بیت کوين` share one listing each). With `q` the listing
   * is in the search's order, best match first (Catalogue.search).
   */
  prepare(allowance: ReadonlySet<string> | null, filter?: CatalogueFilter): Listing {
    const needle = filter?.q === undefined ? '' : (parseQuery(filter.q)?.canonical ?? '');
    const id = filter === undefined ? this.plainId(allowance) : `${this.idOf(allowance)}|${filter.category ?? ''}|${filter.inPlan ?? ''}|${needle}`;
    let listing = this.listings.get(id);
    if (!listing) {
      listing = this.join(allowance, filter?.category, filter?.inPlan, needle);
      // The search text may be a slice of the request's URL: keep a copy of its own, not the URL.
      this.listings.set(detached(id), listing);
    }
    return listing;
  }

  /** The same id as a filter with nothing set would get. */
  private plainId(allowance: ReadonlySet<string> | null): string {
    if (allowance === null) return this.plainIdOfEverything;
    let id = this.plainIds.get(allowance);
    if (id === undefined) this.plainIds.set(allowance, (id = `${this.idOf(allowance)}|||`));
    return id;
  }

  private idOf(allowance: ReadonlySet<string> | null): number {
    if (allowance === null) return EVERY_REFERENCE;
    let id = this.allowanceIds.get(allowance);
    if (id === undefined) this.allowanceIds.set(allowance, (id = this.nextAllowanceId++));
    return id;
  }

  private join(allowance: ReadonlySet<string> | null, category: Category | undefined, inPlan: boolean | undefined, needle: string): Listing {
    const parts: string[] = [];
    let hash = 0;
    const entries = needle === '' ? this.entries : this.catalogue.search(needle).map((reference) => this.byKey.get(reference.key)!);
    for (const entry of entries) {
      const allowed = allowance === null || allowance.has(entry.reference.key);
      if (category !== undefined && entry.reference.category !== category) continue;
      if (inPlan !== undefined && allowed !== inPlan) continue;
      parts.push(allowed ? entry.inPlan : entry.notInPlan);
      hash = combineHash(hash, allowed ? entry.inPlanHash : entry.notInPlanHash);
    }
    return {
      etag: etagOf('c', combineHash(hash, parts.length)),
      body: new StampedBody(Buffer.from(`","count":${parts.length},"references":[${parts.join(',')}]}`)),
    };
  }
}
