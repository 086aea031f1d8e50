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
import { describeStoreError, StoreUnavailableError } from './store/errors.js';
import { Store } from './store/store.js';
import type { FastifyInstance } from 'fastify';
import type { Clock } from './domain/clock.js';
import { createLogger, type Logger } from './log.js';
import { openHistory } from './history/open.js';
import { writeDemoPast, type BackfillSummary } from './demo/backfill.js';

/** How often the store is pinged: how soon `/readyz` and the status page see it leave or return. */
const STORE_CHECK_MS = 1000;
/** SQLite writes in the server wait this long for a CLI's write lock (the driver blocks the event loop meanwhile). */
const SERVER_SQLITE_BUSY_MS = 50;

export interface Runtime {
  app: FastifyInstance;
  store: Store;
  directory: AccessDirectory;
  /** The key of the demo account, when this start created it. */
  demoKey: string | null;
  /**
   * Work that waits until the server listens: the demo's 30-day past on a
   * first start (empty history). Resolves when it is done; safe to call twice.
   */
  startBackground(): Promise<BackfillSummary | null>;
  close(options?: { dropSchema?: boolean }): Promise<void>;
}

export interface RuntimeOptions {
  /** PostgreSQL schema to work in: lets test runs share one database without colliding. */
  schema?: string;
  /** The clock every part reads; the system clock unless a test sets one. */
  clock?: Clock;
  /** How long a start waits for an unreachable database before giving up; 0: not at all. */
  storeWaitMs?: number;
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

  const feeder = config.demo ? new DemoFeeder(config.sources, Math.random, (line) => logger.info({ part: 'demo' }, line), catalogue) : null;
  feeder?.start();

  const store = await openStore(config, options, time, logger);
  logStoreChanges(store, logger);
  const storeCheck = setInterval(() => void store.ping(time.now()), STORE_CHECK_MS);
  storeCheck.unref();

  const demoKey = config.demo ? await ensureDemoAccount(store) : null;

  const monitor = new SourceMonitor(config.sources, time.clock, { logger });
  const engine = new RatesEngine(catalogue, monitor, time, sourcePriority);
  const history = openHistory(store, time, config.history.minuteDays, logger);
  // Asked before anything is recorded: only a history that was empty gets the demo's past.
  const demoPast = config.demo && (await store.history.isEmpty().catch(() => false));
  engine.seedDays(await history.recorder.load());
  await engine.start();
  const recordingFrom = time.now();
  history.recorder.start(engine);
  const longest = Math.max(...[...plans.values()].map((plan) => plan.refresh_interval_seconds));
  const snapshots = new SnapshotHistory(engine.current(), longest);
  engine.onSnapshot((snapshot) => snapshots.push(snapshot));

  // A reload that fails keeps the last directory; the store's health says why.
  const directory = new AccessDirectory(store, plans, catalogue, (error) => store.health.failed(error, time.now()));
  await directory.load();
  directory.start();

  const meter = new UsageMeter(store.usage, store.keys, time, store.health);
  meter.start();

  const sourceHealth = (now: number) => monitor.health(now);
  const metrics = createMetrics(time.clock, sourceHealth, () => snapshots, {
    usage: () => meter.backlog(),
    storeUp: () => store.health.reachable,
    history: () => history.recorder.backlog(),
  });
  const app = await buildApp({
    time,
    catalogue,
    catalogueRenderer: new CatalogueRenderer(catalogue),
    detailRenderer: new DetailRenderer(catalogue),
    legacyRenderer: new LegacyRenderer(catalogue),
    snapshots,
    sourceHealth,
    storeReachable: () => store.health.reachable,
    storeState: () => store.health.state,
    directory,
    metrics,
    limiter: new MemoryLimiter(time),
    failedAttempts: new FailedAttempts(),
    meter,
    usage: store.usage,
    history: history.reader,
    logger,
    loadShedding: options.loadShedding,
  });

  let closing = false;
  let background: Promise<BackfillSummary | null> | null = null;
  return {
    app,
    store,
    directory,
    demoKey,
    startBackground() {
      // The demo's past is written beside the serving process, a reference at a time (src/demo/backfill.ts).
      background ??= demoPast
        ? writeDemoPast(store.history, catalogue, time, logger, { until: recordingFrom, continuation: { recorder: history.recorder, engine }, stopped: () => closing }).catch((error: unknown) => {
            logger.warn({ part: 'demo', reason: describeStoreError(error) }, 'demo: history backfill stopped; the past stays partial');
            return null;
          })
        : Promise.resolve(null);
      return background;
    },
    async close(closeOptions = {}) {
      closing = true;
      await background;
      await app.close();
      // After the last in-flight request: every request served is counted.
      await meter.stop();
      clearInterval(storeCheck);
      directory.stop();
      engine.stop();
      // After the engine: every value served is recorded.
      await history.recorder.stop();
      feeder?.stop();
      await store.close(closeOptions);
    },
  };
}

/**
 * Open the store, waiting up to `storeWaitMs` for a database that is still
 * starting (a compose stack brings PostgreSQL up beside the service): one
 * log line per attempt, then the last error, as one line.
 */
async function openStore(config: AppConfig, options: RuntimeOptions, time: ZoneTime, logger: Logger): Promise<Store> {
  const deadline = time.now() + (options.storeWaitMs ?? 0);
  for (;;) {
    try {
      return await Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: options.schema, sqliteBusyTimeoutMs: SERVER_SQLITE_BUSY_MS }, time.now());
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || time.now() >= deadline) throw error;
      logger.warn({ part: 'store', reason: error.reason }, 'waiting for the database');
      await new Promise((resolve) => setTimeout(resolve, STORE_CHECK_MS));
    }
  }
}

/**
 * Every part that uses the store reports to its health; changes are logged,
 * but a store that flaps (a lock held elsewhere lets reads through and fails
 * writes) is reported once a minute per reason, not once a second.
 */
function logStoreChanges(store: Store, logger: Logger): void {
  const lastLogged = new Map<string, number>();
  let down = false;
  store.health.onChange((state) => {
    if (state.reachable) {
      if (down) logger.info({ part: 'store' }, 'store reachable again; buffered usage is being written');
      down = false;
      return;
    }
    const reason = state.error ?? 'unknown';
    const now = Date.now();
    if (!down && now - (lastLogged.get(reason) ?? -Infinity) >= 60_000) {
      logger.error({ part: 'store', reason }, 'store unreachable; serving from memory and buffering usage');
      lastLogged.set(reason, now);
      down = true;
    }
  });
}

/** Only on a store with no account at all: a `demo` account on `pro`, whose key is returned once. */
async function ensureDemoAccount(store: Store): Promise<string | null> {
  if ((await store.accounts.count()) > 0) return null;
  const account = await store.accounts.create('demo', 'pro');
  const issued = await store.keys.issue(account.id, { label: 'demo' });
  return issued.key;
}
