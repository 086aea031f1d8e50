import type { Catalogue } from './catalogue/catalogue.js';
import { ConfigError } from './config.js';
import { DERIVED_SOURCE, type DerivedReference } from './domain/formula.js';

/**
 * The config's `derived` checked against the catalogue: every reference it
 * computes and every name its formulas read must be a catalogue key or
 * alias, and no formula may read itself, directly or through other derived
 * references. Returns them in an order that puts each after the derived
 * references it reads, the order the engine resolves them in.
 */
export function derivedReferences(config: { derived?: Record<string, DerivedReference['formula']> }, catalogue: Catalogue): DerivedReference[] {
  const byKey = new Map<string, DerivedReference>();
  const writtenAs = new Map<string, string>();
  for (const [name, formula] of Object.entries(config.derived ?? {})) {
    const reference = catalogue.lookup(name);
    if (!reference) throw new ConfigError(`config: derived.${name}: unknown reference "${name}"`);
    const earlier = writtenAs.get(reference.key);
    if (earlier !== undefined) throw new ConfigError(`config: derived.${name}: ${reference.key} already has a formula (derived.${earlier})`);
    const inputs = new Map<string, string>();
    for (const input of formula.names) {
      const read = catalogue.lookup(input);
      if (!read) throw new ConfigError(`config: derived.${name}: unknown reference "${input}"`);
      inputs.set(input, read.key);
    }
    writtenAs.set(reference.key, name);
    byKey.set(reference.key, { key: reference.key, formula, inputs });
  }
  return dependencyOrder(byKey);
}

/** Depth first, each reference after the derived ones it reads; a path that comes back to itself is a cycle, named in full. */
function dependencyOrder(byKey: ReadonlyMap<string, DerivedReference>): DerivedReference[] {
  const ordered: DerivedReference[] = [];
  const done = new Set<string>();
  const visit = (key: string, path: string[]) => {
    if (done.has(key)) return;
    const at = path.indexOf(key);
    if (at >= 0) throw new ConfigError(`config: ${DERIVED_SOURCE}: cycle ${[...path.slice(at), key].join(' → ')}`);
    const derived = byKey.get(key)!;
    for (const input of new Set(derived.inputs.values())) if (byKey.has(input)) visit(input, [...path, key]);
    done.add(key);
    ordered.push(derived);
  };
  for (const key of byKey.keys()) visit(key, []);
  return ordered;
}

/** `derived` in a reference's `source_priority` only makes sense for a reference that has a formula. */
export function checkDerivedPriority(priority: Record<string, string[]>, derived: readonly DerivedReference[]): void {
  const computed = new Set(derived.map((reference) => reference.key));
  for (const [key, names] of Object.entries(priority)) {
    const at = names.indexOf(DERIVED_SOURCE);
    if (at >= 0 && !computed.has(key)) throw new ConfigError(`config: source_priority.${key}[${at}]: "${DERIVED_SOURCE}" serves only references with a formula in derived, and ${key} has none`);
  }
}
