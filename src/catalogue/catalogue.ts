import type { Category, Reference } from '../domain/reference.js';
import { NO_MATCH, parseQuery, SearchText } from '../domain/search.js';

/** The validated reference data, indexed by key and alias (both lowercase). */
export class Catalogue {
  readonly references: readonly Reference[];
  /** Canonical keys, most requested first; the source of plans' default references. */
  readonly popular: readonly string[];
  private readonly byName = new Map<string, Reference>();
  private readonly byKey = new Map<string, Reference>();
  /** Per reference, in catalogue order: its search text and its place in the popularity order. */
  private readonly searchable: { reference: Reference; text: SearchText; popularity: number }[];

  constructor(references: Reference[], popular: string[]) {
    this.references = references;
    for (const reference of references) {
      this.byKey.set(reference.key, reference);
      this.byName.set(reference.key, reference);
      for (const alias of reference.aliases) this.byName.set(alias, reference);
    }
    // Popular keys first, then the rest in catalogue order: plans slice their defaults from here.
    const ordered = new Set(popular.filter((key) => this.byKey.has(key)));
    for (const reference of references) ordered.add(reference.key);
    this.popular = [...ordered];
    const popularity = new Map(this.popular.map((key, i) => [key, i]));
    this.searchable = references.map((reference) => ({
      reference,
      text: new SearchText([reference.key, ...reference.aliases], [reference.title, reference.title_en]),
      popularity: popularity.get(reference.key)!,
    }));
  }

  /** A key or alias, any case, to its reference. */
  lookup(name: string): Reference | undefined {
    return this.byName.get(name) ?? this.byName.get(name.toLowerCase());
  }

  get(key: string): Reference | undefined {
    return this.byKey.get(key);
  }

  get size(): number {
    return this.references.length;
  }

  inCategory(category: Category): Reference[] {
    return this.references.filter((reference) => reference.category === category);
  }

  /**
   * The references matching a search (see domain/search.ts), best first: a
   * key or alias equal to it, then a whole title, then names and titles
   * starting with it, holding it, holding its words; within each, the more
   * popular first. A query of separators only matches everything, in
   * catalogue order.
   */
  search(text: string): Reference[] {
    const query = parseQuery(text);
    if (query === null) return [...this.references];
    const matches: { reference: Reference; rank: number; popularity: number }[] = [];
    for (const { reference, text: searchText, popularity } of this.searchable) {
      const rank = searchText.rank(query);
      if (rank !== NO_MATCH) matches.push({ reference, rank, popularity });
    }
    matches.sort((a, b) => a.rank - b.rank || a.popularity - b.popularity);
    return matches.map((match) => match.reference);
  }
}
