import type { NoticeKind } from '../bus/notices.js';
import { loadReferenceData } from '../config-checks.js';
import { loadConfig, type AppConfig } from '../config.js';
import type { Plan } from '../domain/plan.js';
import { ZoneTime } from '../domain/time.js';
import { Store } from '../store/store.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import { announce } from './announce.js';

/** What an admin command works with: the same config, plans and store as the server. */
export interface CliContext {
  config: AppConfig;
  catalogue: Catalogue;
  plans: Map<string, Plan>;
  store: Store;
  time: ZoneTime;
  /** Note a change the servers must see: announced to every one of them once the command succeeds. */
  changed(kind: NoticeKind): void;
}

export async function withContext<T>(work: (context: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { catalogue, plans } = loadReferenceData(config);
  const store = await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const changes = new Set<NoticeKind>();
  let result: T;
  try {
    result = await work({ config, catalogue, plans, store, time: new ZoneTime(config.timezone), changed: (kind) => changes.add(kind) });
  } finally {
    await store.close();
  }
  await announce(config, changes);
  return result;
}
