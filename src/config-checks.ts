import type { Catalogue } from './catalogue/catalogue.js';
import { loadCatalogue } from './catalogue/load.js';
import { ConfigError, type AppConfig, type ScreeningFields } from './config.js';
import { checkDerivedPriority, derivedReferences } from './config-derived.js';
import type { DerivedReference } from './domain/formula.js';
import { buildPlans, type Plan } from './domain/plan.js';
import { DEFAULT_SCREENING, type Screening } from './domain/screening.js';
import { marketOfReference } from './domain/market-specs.js';

export interface ReferenceData {
  catalogue: Catalogue;
  plans: Map<string, Plan>;
  /** `source_priority` keyed by canonical reference key. */
  sourcePriority: Record<string, string[]>;
  /** Screening rules keyed by canonical reference key; a reference not listed screens with DEFAULT_SCREENING. */
  screening: Record<string, Screening>;
  /** The config's derived references, checked, in the order they are resolved (each after the derived ones it reads). */
  derived: DerivedReference[];
  /** Each reference's market by canonical key (config `markets`); null: no market takes it, always open. */
  marketOf: ReadonlyMap<string, string | null>;
}

/** The catalogue and the plans built on it, with the config's references checked: what the server and the CLI share. */
export function loadReferenceData(config: AppConfig): ReferenceData {
  const catalogue = loadCatalogue(config.cataloguePath);
  const plans = buildPlans(catalogue.popular, config.plans);
  const sourcePriority = checkAgainstCatalogue(config, plans, catalogue);
  const derived = derivedReferences(config, catalogue);
  checkDerivedPriority(sourcePriority, derived);
  return { catalogue, plans, sourcePriority, screening: screeningRules(config, catalogue), derived, marketOf: marketsOf(config, catalogue) };
}

/** Each reference's market; a reference a market names must be in the catalogue (key or alias). */
export function marketsOf(config: AppConfig, catalogue: Catalogue): Map<string, string | null> {
  for (const spec of config.markets) {
    for (const name of spec.references) if (!catalogue.lookup(name)) throw new ConfigError(`config: markets.${spec.name}.references: unknown reference "${name}"`);
  }
  return new Map(catalogue.references.map((reference) => [reference.key, marketOfReference(reference, config.markets)]));
}

/**
 * The config's `screening` as one complete rule per reference it touches:
 * the defaults, then `"*"`, then the reference's own entry (key or alias),
 * field by field.
 */
export function screeningRules(config: AppConfig, catalogue: Catalogue): Record<string, Screening> {
  const { '*': everywhere, ...byName } = config.screening;
  const own = new Map<string, ScreeningFields>();
  for (const [name, fields] of Object.entries(byName)) {
    const reference = catalogue.lookup(name);
    if (!reference) throw new ConfigError(`config: screening.${name}: unknown reference "${name}"`);
    own.set(reference.key, { ...own.get(reference.key), ...fields });
  }
  const rules: Record<string, Screening> = {};
  const keys = everywhere ? catalogue.references.map((reference) => reference.key) : [...own.keys()];
  for (const key of keys) {
    const fields = { ...everywhere, ...own.get(key) };
    rules[key] = {
      outlierMads: fields.outlier_mads ?? DEFAULT_SCREENING.outlierMads,
      outlierMinPercent: fields.outlier_min_percent ?? DEFAULT_SCREENING.outlierMinPercent,
      maxJumpPercent: fields.max_jump_percent ?? DEFAULT_SCREENING.maxJumpPercent,
      confirmMs: (fields.confirm_seconds ?? DEFAULT_SCREENING.confirmMs / 1000) * 1000,
    };
  }
  return rules;
}

/**
 * The parts of the config that name references, checked against the loaded
 * catalogue: plans' default references, the item keys of mapping and ecb
 * sources, and `source_priority`. Returns the
 * source priority keyed by canonical reference key (aliases are accepted).
 */
export function checkAgainstCatalogue(config: AppConfig, plans: ReadonlyMap<string, Plan>, catalogue: Catalogue): Record<string, string[]> {
  for (const plan of plans.values()) {
    plan.default_references.forEach((key, index) => {
      if (!catalogue.lookup(key)) throw new ConfigError(`config: plans.${plan.name}.default_references[${index}]: unknown reference "${key}"`);
    });
  }
  checkItemKeys(config, catalogue);
  const priority: Record<string, string[]> = {};
  for (const [name, sources] of Object.entries(config.sourcePriority)) {
    const reference = catalogue.lookup(name);
    if (!reference) throw new ConfigError(`config: source_priority.${name}: unknown reference "${name}"`);
    priority[reference.key] = sources;
  }
  return priority;
}

/**
 * Every source key a mapping or ecb source reads must be one the catalogue
 * has: a misspelt key would read a value that no reference ever serves. A
 * reference key or alias given instead is named with its source key.
 */
function checkItemKeys(config: AppConfig, catalogue: Catalogue): void {
  const known = new Set(catalogue.references.map((reference) => reference.source_key));
  config.sources.forEach((source, index) => {
    const format = source.format;
    const items = format?.kind === 'mapping' || format?.kind === 'ecb' ? format.items : [];
    for (const { sourceKey } of items) {
      if (known.has(sourceKey)) continue;
      const reference = catalogue.lookup(sourceKey);
      const hint = reference ? ` (the reference ${reference.key} reads source_key "${reference.source_key}")` : '';
      throw new ConfigError(`config: sources[${index}].items.${sourceKey}: source "${source.name}": "${sourceKey}" is no source_key of the catalogue${hint}`);
    }
  });
}
