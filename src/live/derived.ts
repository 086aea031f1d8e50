import type { Catalogue } from '../catalogue/catalogue.js';
import { DERIVED_SOURCE, evaluateFormula, FormulaError, type DerivedReference } from '../domain/formula.js';
import type { ResolvedRate, SourceValue } from '../domain/rate.js';
import type { Reference } from '../domain/reference.js';
import type { SourceView } from '../domain/resolve.js';
import { RIAL_CURRENCY } from '../domain/units.js';

/** One value a derived value was computed from: what the engine served for that reference in the same build. */
export interface DerivedInput {
  key: string;
  /** Number text, as served. */
  value: string;
  currency: string;
  updatedAt: number;
  status: 'ok' | 'stale';
  source: string;
}

/** The `derived` source as the resolver sees it, with the inputs of each value for `expand=sources`. */
export interface DerivedView extends SourceView {
  /** By source key: the inputs the value under that key was computed from. */
  readonly inputs: ReadonlyMap<string, readonly DerivedInput[]>;
}

export function isDerivedView(view: SourceView): view is DerivedView {
  return (view as Partial<DerivedView>).inputs !== undefined;
}

/** The digits a derived value is rounded to: whole rials, otherwise 6 decimals. */
export function derivedDecimals(reference: Reference): number {
  return reference.currency === RIAL_CURRENCY ? 0 : 6;
}

/** What one build served for a reference that a formula reads, and until when it is fresh. */
interface Served {
  rate: ResolvedRate;
  freshUntil: number;
}

/**
 * The config's derived references for the engine: which references have a
 * formula, the order to resolve the catalogue in (every reference before the
 * derived ones that read it), and a fresh `derived` source for each build.
 */
export class Derivations {
  /** Catalogue indexes, the references with a formula last, each after those it reads. */
  readonly order: readonly number[];
  readonly keys: ReadonlySet<string>;
  private readonly byKey: ReadonlyMap<string, DerivedReference>;
  /** Reference keys some formula reads: only their rates are remembered during a build. */
  private readonly read: ReadonlySet<string>;

  constructor(catalogue: Catalogue, derived: readonly DerivedReference[]) {
    this.byKey = new Map(derived.map((reference) => [reference.key, reference]));
    this.keys = new Set(this.byKey.keys());
    this.read = new Set(derived.flatMap((reference) => [...reference.inputs.values()]));
    const index = new Map(catalogue.references.map((reference, i) => [reference.key, i]));
    const plain = catalogue.references.map((_, i) => i).filter((i) => !this.keys.has(catalogue.references[i]!.key));
    this.order = [...plain, ...derived.map((reference) => index.get(reference.key)!)];
  }

  begin(): DerivedBuild {
    return new DerivedBuild(this.byKey, this.read);
  }
}

/**
 * The `derived` source of one build. Before a reference with a formula is
 * resolved, its value is computed from what the build served for its inputs
 * (after failover and screening), exactly, and put in the view; the resolver
 * then treats it like any source's value (bands, screening, priority).
 * Its time is its oldest input's; it is fresh only while every input is.
 */
export class DerivedBuild {
  readonly view: DerivedView;
  private readonly items = new Map<string, SourceValue>();
  private readonly inputs = new Map<string, readonly DerivedInput[]>();
  private readonly served = new Map<string, Served>();

  constructor(
    private readonly byKey: ReadonlyMap<string, DerivedReference>,
    private readonly read: ReadonlySet<string>,
  ) {
    // Always healthy, and aged by its inputs (each value's expiry), not by a max age of its own.
    this.view = { name: DERIVED_SOURCE, healthy: true, maxAgeMs: Infinity, items: this.items, inputs: this.inputs };
  }

  /** What the build served for `key`; `freshUntil` is when that value stops being fresh (ignored unless `ok`). */
  record(key: string, rate: ResolvedRate, freshUntil: number): void {
    if (this.read.has(key)) this.served.set(key, { rate, freshUntil });
  }

  /** Compute the derived value of `reference`, if it has a formula and every input has a value. */
  prepare(reference: Reference): void {
    const derived = this.byKey.get(reference.key);
    if (!derived) return;
    const inputs: DerivedInput[] = [];
    const values = new Map<string, string>();
    let oldest = Infinity;
    let freshUntil = Infinity;
    let allFresh = true;
    for (const [name, key] of derived.inputs) {
      const served = this.served.get(key);
      const rate = served?.rate;
      // An input with no value leaves the derived reference without one.
      if (!served || !rate || rate.value === null || rate.updated_at === null || rate.source === null) return;
      values.set(name, rate.value);
      if (inputs.some((input) => input.key === key)) continue;
      inputs.push({ key, value: rate.value, currency: rate.currency, updatedAt: rate.updated_at, status: rate.status === 'ok' ? 'ok' : 'stale', source: rate.source });
      oldest = Math.min(oldest, rate.updated_at);
      if (rate.status === 'ok') freshUntil = Math.min(freshUntil, served.freshUntil);
      else allFresh = false;
    }
    let raw: string;
    try {
      raw = evaluateFormula(derived.formula, (name) => values.get(name)!, derivedDecimals(reference));
    } catch (error) {
      // A division by zero (say, a difference of two equal inputs) gives no value this build.
      if (error instanceof FormulaError) return;
      throw error;
    }
    if (raw.startsWith('-') || /^0(\.0+)?$/.test(raw)) return;
    // A stale input makes the value stale from the start: it expires when it is made.
    this.items.set(reference.source_key, { raw, value: Number(raw), updatedAt: oldest, expiresAt: allFresh ? freshUntil : oldest });
    this.inputs.set(reference.source_key, inputs);
  }
}
