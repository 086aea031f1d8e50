/**
 * What the /v1/usage suites share: a file source `alpha` with two rates
 * (usd_free and coin_emami) that never goes stale during a run, and a config
 * file naming it with the suite's own plans.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSource } from '../support/env.js';

/** Writes the source under `dir`/feeds and `dir`/nerkh.config.json with `plans`; returns the config path. */
export function writeUsageConfig(dir: string, plans: Record<string, object>): string {
  mkdirSync(join(dir, 'feeds'), { recursive: true });
  writeSource(join(dir, 'feeds', 'alpha.json'), { ir_fx_free_usd: 1_103_125, ir_coin_emami: 1_100_000_000 });
  const path = join(dir, 'nerkh.config.json');
  writeFileSync(path, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: './feeds/alpha.json', max_age_seconds: 3600 }], plans }));
  return path;
}
