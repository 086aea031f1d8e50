import type { Category, Reference } from '../domain/reference.js';

/** The validated reference data, indexed by key and alias (both lowercase). */
export class Catalogue {
  readonly references: readonly Reference[];
  /** Canonical keys, most requested first; the source of plans' default references. */
  readonly popular: readonly string[];
  private readonly byName = new Map<string, Reference>();
  private readonly byKey = new Map<string, Reference>();

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
}
