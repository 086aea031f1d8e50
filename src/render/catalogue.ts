import { LRUCache } from 'lru-cache';
import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf, fnv1a } from '../domain/hash.js';
import type { Category, Reference } from '../domain/reference.js';
import { foldForSearch } from '../domain/search.js';
import { StampedBody } from './detail.js';

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
  /** Key, aliases and titles, folded for search. */
  haystack: string;
}

/** A listing ready to send but for its time: `","count":…,"references":[…]}` encoded once, stamped once a second. */
export interface Listing {
  etag: string;
  body: StampedBody;
}

/** Listings kept, by bytes (the full catalogue is about 130 KB, its compressed forms about 35 KB more). */
const MAX_CACHED_BYTES = 16 * 1024 * 1024;
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
  private readonly listings = new LRUCache<string, Listing>({ maxSize: MAX_CACHED_BYTES, sizeCalculation: (listing) => listing.body.size });
  private readonly allowanceIds = new WeakMap<ReadonlySet<string>, number>();
  private nextAllowanceId = EVERY_REFERENCE + 1;

  constructor(catalogue: Catalogue) {
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
      const haystack = foldForSearch([reference.key, ...reference.aliases, reference.title, reference.title_en].join('\n'));
      return { reference, inPlan, notInPlan, inPlanHash: fnv1a(inPlan), notInPlanHash: fnv1a(notInPlan), haystack };
    });
  }

  /** `allowance`: the caller's references, null for every one. */
  prepare(allowance: ReadonlySet<string> | null, filter: CatalogueFilter = {}): Listing {
    const needle = filter.q === undefined ? '' : foldForSearch(filter.q.trim());
    const id = `${this.idOf(allowance)}|${filter.category ?? ''}|${filter.inPlan ?? ''}|${needle}`;
    let listing = this.listings.get(id);
    if (!listing) {
      listing = this.join(allowance, filter.category, filter.inPlan, needle);
      this.listings.set(id, listing);
    }
    return listing;
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
    for (const entry of this.entries) {
      const allowed = allowance === null || allowance.has(entry.reference.key);
      if (category !== undefined && entry.reference.category !== category) continue;
      if (inPlan !== undefined && allowed !== inPlan) continue;
      if (needle !== '' && !entry.haystack.includes(needle)) continue;
      parts.push(allowed ? entry.inPlan : entry.notInPlan);
      hash = combineHash(hash, allowed ? entry.inPlanHash : entry.notInPlanHash);
    }
    return {
      etag: etagOf('c', combineHash(hash, parts.length)),
      body: new StampedBody(Buffer.from(`","count":${parts.length},"references":[${parts.join(',')}]}`)),
    };
  }
}
