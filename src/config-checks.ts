import type { Catalogue } from './catalogue/catalogue.js';
import { loadCatalogue } from './catalogue/load.js';
import { ConfigError, type AppConfig } from './config.js';
import { buildPlans, type Plan } from './domain/plan.js';

export interface ReferenceData {
  catalogue: Catalogue;
  plans: Map<string, Plan>;
  /** `source_priority` keyed by canonical reference key. */
  sourcePriority: Record<string, string[]>;
}

/** The catalogue and the plans built on it, with the config's references checked: what the server and the CLI share. */
export function loadReferenceData(config: AppConfig): ReferenceData {
  const catalogue = loadCatalogue(config.cataloguePath);
  const plans = buildPlans(catalogue.popular, config.plans);
  return { catalogue, plans, sourcePriority: checkAgainstCatalogue(config, plans, catalogue) };
}

/**
 * The parts of the config that name references, checked against the loaded
 * catalogue: plans' default references and `source_priority`. Returns the
 * source priority keyed by canonical reference key (aliases are accepted).
 */
export function checkAgainstCatalogue(config: AppConfig, plans: ReadonlyMap<string, Plan>, catalogue: Catalogue): Record<string, string[]> {
  for (const plan of plans.values()) {
    plan.default_references.forEach((key, index) => {
      if (!catalogue.lookup(key)) throw new ConfigError(`config: plans.${plan.name}.default_references[${index}]: unknown reference "${key}"`);
    });
  }
  const priority: Record<string, string[]> = {};
  for (const [name, sources] of Object.entries(config.sourcePriority)) {
    const reference = catalogue.lookup(name);
    if (!reference) throw new ConfigError(`config: source_priority.${name}: unknown reference "${name}"`);
    priority[reference.key] = sources;
  }
  return priority;
}
