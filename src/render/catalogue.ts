import type { Catalogue } from '../catalogue/catalogue.js';
import { combineHash, etagOf, fnv1a } from '../domain/hash.js';
import type { Category, Reference } from '../domain/reference.js';
import { StampedBody, type Rendered } from './detail.js';

interface Listing {
  json: string;
  count: number;
  hash: number;
  /** `","count":…,"references":[…]}` encoded once, stamped with the time once a second. */
  body: StampedBody;
}

/**
 * The catalogue response. Each reference is serialised once at start-up; the
 * unfiltered and per-category listings are joined once too, so a request adds
 * only the envelope. A `q` search filters on the fly.
 */
export class CatalogueRenderer {
  private readonly entries: { reference: Reference; json: string; hash: number; haystack: string }[];
  private readonly all: Listing;
  private readonly byCategory = new Map<Category, Listing>();

  constructor(catalogue: Catalogue) {
    this.entries = catalogue.references.map((reference) => {
      // The sanity band (min, max) is internal: it screens sources and never reaches a client.
      const json = JSON.stringify({
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
      });
      const haystack = [reference.key, ...reference.aliases, reference.title, reference.title_en].join('\n').toLowerCase();
      return { reference, json, hash: fnv1a(json), haystack };
    });
    this.all = join(this.entries);
    for (const entry of this.entries) {
      if (!this.byCategory.has(entry.reference.category)) {
        this.byCategory.set(entry.reference.category, join(this.entries.filter((e) => e.reference.category === entry.reference.category)));
      }
    }
  }

  render(generatedAt: string, category?: Category, q?: string): Rendered {
    let listing = category ? this.byCategory.get(category) ?? join([]) : this.all;
    if (q !== undefined && q.trim() !== '') {
      const needle = q.trim().toLowerCase();
      listing = join(this.entries.filter((e) => (!category || e.reference.category === category) && e.haystack.includes(needle)));
    }
    return { body: listing.body.at(generatedAt), etag: etagOf('c', listing.hash) };
  }
}

function join(entries: { json: string; hash: number }[]): Listing {
  const json = entries.map((e) => e.json).join(',');
  return {
    json,
    count: entries.length,
    hash: entries.reduce((h, e) => combineHash(h, e.hash), fnv1a(String(entries.length))),
    body: new StampedBody(Buffer.from(`","count":${entries.length},"references":[${json}]}`)),
  };
}
