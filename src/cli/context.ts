import { loadReferenceData } from '../config-checks.js';
import { loadConfig, type AppConfig } from '../config.js';
import type { Plan } from '../domain/plan.js';
import { ZoneTime } from '../domain/time.js';
import { Store } from '../store/store.js';
import type { Catalogue } from '../catalogue/catalogue.js';

/** What an admin command works with: the same config, plans and store as the server. */
export interface CliContext {
  config: AppConfig;
  catalogue: Catalogue;
  plans: Map<string, Plan>;
  store: Store;
  time: ZoneTime;
}

export async function withContext<T>(work: (context: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { catalogue, plans } = loadReferenceData(config);
  const store = await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    return await work({ config, catalogue, plans, store, time: new ZoneTime(config.timezone) });
  } finally {
    await store.close();
  }
}
