import { AccessDirectory } from './access/directory.js';
import { buildApp, type AppDeps } from './app.js';
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
import type { Clock } from './domain/clock.js';
import { createLogger, type Logger } from './log.js';

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
  /** The clock every part reads; the system clock unless a test sets one. */
  clock?: Clock;
  /** The process's logger; one at the config's level unless given. */
  logger?: Logger;
  /** Overload thresholds over the defaults (tests lower them). */
  loadShedding?: AppDeps['loadShedding'];
}

/** Assemble the service from its config: data, sources, store, access, HTTP. Nothing listens yet. */
export async function startRuntime(config: AppConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  const time = new ZoneTime(config.timezone, options.clock);
  const logger = options.logger ?? createLogger(config.logLevel);
  const { catalogue, plans, sourcePriority } = loadReferenceData(config);

  const feeder = config.demo ? new DemoFeeder(config.sources, Math.random, (line) => logger.info({ part: 'demo' }, line)) : null;
  feeder?.start();

  const store = await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: options.schema });
  let storeReachable = true;
  const storeCheck = setInterval(() => void store.ping().then((ok) => (storeReachable = ok)), STORE_CHECK_MS);
  storeCheck.unref();

  const demoKey = config.demo ? await ensureDemoAccount(store) : null;

  const monitor = new SourceMonitor(config.sources, time.clock);
  const engine = new RatesEngine(catalogue, monitor, time, sourcePriority);
  await engine.start();
  const longest = Math.max(...[...plans.values()].map((plan) => plan.refresh_interval_seconds));
  const snapshots = new SnapshotHistory(engine.current(), longest);
  engine.onSnapshot((snapshot) => snapshots.push(snapshot));

  const directory = new AccessDirectory(store, plans, catalogue, (error) => logger.warn({ part: 'directory', err: error }, 'access directory reload failed; keeping the last one'));
  await directory.load();
  directory.start();

  const meter = new UsageMeter(store.usage, store.keys, time, (error) => logger.warn({ part: 'usage', err: error }, 'usage flush failed; counts kept for the next try'));
  meter.start();

  const sourceHealth = (now: number) => monitor.health(now);
  const metrics = createMetrics(time.clock, sourceHealth, () => snapshots);
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
    logger,
    loadShedding: options.loadShedding,
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
