import { AccessDirectory } from './access/directory.js';
import { buildApp } from './app.js';
import type { AppConfig } from './config.js';
import { DemoFeeder } from './demo/feeder.js';
import { ZoneTime } from './domain/time.js';
import { createMetrics } from './http/metrics.js';
import { RatesEngine } from './live/engine.js';
import { SnapshotHistory } from './live/history.js';
import { CatalogueRenderer } from './render/catalogue.js';
import { DetailRenderer } from './render/detail.js';
import { LegacyRenderer } from './render/legacy.js';
import { UsageMeter } from './usage/meter.js';
import { MemoryLimiter } from './access/limiter/memory.js';
import { FailedAttempts } from './access/failed-attempts.js';
import { SourceMonitor } from './sources/monitor.js';
import { loadReferenceData } from './config-checks.js';
import { Store } from './store/store.js';
import type { FastifyInstance } from 'fastify';

const STORE_CHECK_MS = 2000;

export interface Runtime {
  app: FastifyInstance;
  store: Store;
  directory: AccessDirectory;
  /** The key of the demo account, when this start created it. */
  demoKey: string | null;
  close(options?: { dropSchema?: boolean }): Promise<void>;
}

export interface RuntimeOptions {
  /** PostgreSQL schema to work in: lets test runs share one database without colliding. */
  schema?: string;
}

/** Assemble the service from its config: data, sources, store, access, HTTP. Nothing listens yet. */
export async function startRuntime(config: AppConfig, log: (line: string) => void = console.log, options: RuntimeOptions = {}): Promise<Runtime> {
  const time = new ZoneTime(config.timezone);
  const { catalogue, plans, sourcePriority } = loadReferenceData(config);

  const feeder = config.demo ? new DemoFeeder(config.sources, Math.random, log, catalogue) : null;
  feeder?.start();

  const store = await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: options.schema });
  let storeReachable = true;
  const storeCheck = setInterval(() => void store.ping().then((ok) => (storeReachable = ok)), STORE_CHECK_MS);
  storeCheck.unref();

  const demoKey = config.demo ? await ensureDemoAccount(store) : null;

  const monitor = new SourceMonitor(config.sources);
  const engine = new RatesEngine(catalogue, monitor, time, sourcePriority);
  await engine.start();
  const longest = Math.max(...[...plans.values()].map((plan) => plan.refresh_interval_seconds));
  const snapshots = new SnapshotHistory(engine.current(), longest);
  engine.onSnapshot((snapshot) => snapshots.push(snapshot));

  const directory = new AccessDirectory(store, plans, catalogue, (error) => log(`access directory reload failed: ${(error as Error).message}`));
  await directory.load();
  directory.start();

  const meter = new UsageMeter(store.usage, store.keys, time, (error) => log(`usage flush failed (kept for the next try): ${(error as Error).message}`));
  meter.start();

  const sourceHealth = (now: number) => monitor.health(now);
  const metrics = createMetrics(sourceHealth, () => snapshots);
  const app = await buildApp({
    time,
    catalogue,
    catalogueRenderer: new CatalogueRenderer(catalogue),
    detailRenderer: new DetailRenderer(catalogue),
    legacyRenderer: new LegacyRenderer(catalogue),
    snapshots,
    sourceHealth,
    storeReachable: () => storeReachable,
    directory,
    metrics,
    limiter: new MemoryLimiter(time),
    failedAttempts: new FailedAttempts(),
    meter,
    usage: store.usage,
    logLevel: config.logLevel,
  });

  return {
    app,
    store,
    directory,
    demoKey,
    async close(closeOptions = {}) {
      await app.close();
      // After the last in-flight request: every request served is counted.
      await meter.stop();
      clearInterval(storeCheck);
      directory.stop();
      engine.stop();
      feeder?.stop();
      await store.close(closeOptions);
    },
  };
}

/** Only on a store with no account at all: a `demo` account on `pro`, whose key is returned once. */
async function ensureDemoAccount(store: Store): Promise<string | null> {
  if ((await store.accounts.count()) > 0) return null;
  const account = await store.accounts.create('demo', 'pro');
  const issued = await store.keys.issue(account.id, { label: 'demo' });
  return issued.key;
}
