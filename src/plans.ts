import type { Catalogue } from './catalogue/catalogue.js';
import { ConfigError } from './config.js';
import type { Plan } from './domain/plan.js';

/** Configured plans may only name references that exist. */
export function checkPlans(plans: ReadonlyMap<string, Plan>, catalogue: Catalogue): void {
  for (const plan of plans.values()) {
    plan.default_references.forEach((key, index) => {
      if (!catalogue.lookup(key)) throw new ConfigError(`config: plans.${plan.name}.default_references[${index}]: unknown reference "${key}"`);
    });
  }
}
