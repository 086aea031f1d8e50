import type { AccessDirectory } from './access/directory.js';
import { buildProbeApp, type AppDeps } from './app.js';
import type { Catalogue } from './catalogue/catalogue.js';
import type { AppConfig } from './config.js';
import { ZoneTime } from './domain/time.js';
import { createMetrics } from './http/metrics.js';
import { loadReferenceData } from './config-checks.js';
import { openBackends } from './roles/backends.js';
import type { Role } from './roles/role.js';
import { SnapshotFeed } from './roles/feed.js';
import { IngestRole } from './roles/ingest.js';
import { startServing } from './roles/serve.js';
import { describeStoreError, StoreUnavailableError } from './store/errors.js';
import { writeDemoPast, type BackfillSummary, type PastContinuation } from './demo/backfill.js';
import { Store } from './store/store.js';
import type { FastifyInstance } from 'fastify';
import type { Clock } from './domain/clock.js';
import { createLogger, type Logger } from './log.js';
import { openHistory } from './history/open.js';
import type { RecorderFence } from './history/recorder.js';
import { epochOf, type LeaderLease } from './bus/lease.js';

/** How often the store is pinged: how soon `/readyz` and the status page see it leave or return. */
const STORE_CHECK_MS = 1000;
/** SQLite writes in the server wait this long for a CLI's write lock (the driver blocks the event loop meanwhile). */
const SERVER_SQLITE_BUSY_MS = 50;

export interface Runtime {
  app: FastifyInstance;
  store: Store;
  /** The key directory; null for an ingest-only process, which serves no keyed request. */
  directory: AccessDirectory | null;
  /** The key of the demo account, when this start created it. */
  demoKey: string | null;
  /**
   * Work that waits until the server listens: the demo's 30-day past on a
   * first start (empty history), written while this node records. Resolves
   * when it is done; safe to call twice.
   */
  startBackground(): Promise<BackfillSummary | null>;
  /** Hand the ingest lease over at once, before the drain (another node takes over while this one finishes its requests). */
  stepDown(): Promise<void>;
  close(options?: { dropSchema?: boolean }): Promise<void>;
}

export interface RuntimeOptions {
  /** What this process does (PRODUCT §10); `all` unless set. */
  role?: Role;
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
  /** Stream timings and bounds over the defaults (tests lower them). */
  stream?: AppDeps['stream'];
  /** How often the key directory polls the store (default 500 ms; tests of change notices slow it down). */
  directoryPollMs?: number;
}

/**
 * Assemble the service from its config: picks the role's parts and the
 * backends (in process, or Redis when `NERKH_REDIS_URL` is set), nothing
 * else. Nothing listens yet.
 *
 *   ingest (roles `all`, `ingest`): sources → monitor → engine → bus, while this node leads
 *   serve (roles `all`, `api`):      bus → snapshot tiers → HTTP
 *
 * Without Redis the bus, lease, limiter and notices are in-process twins:
 * one process leads and serves, exactly as a single server always did.
 */
export async function startRuntime(config: AppConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  const role = options.role ?? 'all';
  const time = new ZoneTime(config.timezone, options.clock);
  const logger = options.logger ?? createLogger(config.logLevel);
  const { catalogue, plans, sourcePriority, screening } = loadReferenceData(config);

  const store = await openStore(config, options, time, logger);
  logStoreChanges(store, logger);
  const storeCheck = setInterval(() => void store.ping(time.now()), STORE_CHECK_MS);
  storeCheck.unref();

  const backends = openBackends(config, role, time, logger);
  // A Redis that lost its epoch counter must not hand out an epoch the history has already seen.
  await backends.lease?.respectFence(
    await store.history.fence().catch((error: unknown) => {
      logger.warn({ part: 'history', reason: describeStoreError(error) }, 'history fence not readable at start; a refused write will raise it');
      return 0;
    }),
  );
  await backends.start();

  // History: only the ingest leader records (a recorder per spell of leadership); every serving node reads the store.
  const openRecorder = () => openHistory(store, time, config.history.minuteDays, logger, undefined, leaderFence(backends.lease, logger)).recorder;
  const past = demoPast(config.demo && backends.lease !== null && (await store.history.isEmpty().catch(() => false)), store, catalogue, time, logger);
  const ingest = backends.lease
    ? new IngestRole({ id: backends.id, config, catalogue, sourcePriority, screening, time, logger, lease: backends.lease, bus: backends.bus, openRecorder, onRecording: past.recording })
    : null;

  const longest = Math.max(...[...plans.values()].map((plan) => plan.refresh_interval_seconds));
  const feed = new SnapshotFeed({ bus: backends.bus, time, sources: config.sources, longestIntervalSeconds: longest, localHealth: (now) => ingest?.health(now) ?? null });
  feed.start();
  // A node that leads now starts listening with its first snapshot built; any other serves what the bus brings.
  await ingest?.start();

  const served =
    role === 'ingest'
      ? null
      : await startServing({
          catalogue,
          plans,
          time,
          logger,
          store,
          backends,
          feed,
          history: openHistory(store, time, config.history.minuteDays, logger, () => ingest?.recorder ?? null).reader,
          historyBacklog: () => ingest?.recorder?.backlog() ?? NO_HISTORY_BACKLOG,
          loadShedding: options.loadShedding,
          stream: options.stream,
          directoryPollMs: options.directoryPollMs,
        });
  const demoKey = config.demo && served ? await ensureDemoAccount(store, logger) : null;
  // The key printed must work at once, not from the directory's next poll.
  if (demoKey) await served?.directory.load();
  const app =
    served?.app ??
    (await buildProbeApp({
      time,
      logger,
      snapshots: feed.snapshots,
      storeReachable: () => store.health.reachable,
      metrics: createMetrics(time.clock, (now) => feed.sourceHealth(now), () => feed.snapshots, {
        usage: noUsage,
        storeUp: () => store.health.reachable,
        history: () => ingest?.recorder?.backlog() ?? NO_HISTORY_BACKLOG,
        cluster: () => backends.cluster(time.now()),
      }),
    }));

  let steppedDown: Promise<void> | null = null;
  const stepDown = () =>
    (steppedDown ??= (async () => {
      await ingest?.stop();
      await backends.stepDown();
    })());
  return {
    app,
    store,
    directory: served?.directory ?? null,
    demoKey,
    startBackground: past.listening,
    stepDown,
    async close(closeOptions = {}) {
      await past.stop();
      await stepDown();
      await app.close();
      await served?.close();
      feed.stop();
      await backends.close();
      clearInterval(storeCheck);
      await store.close(closeOptions);
    },
  };
}

const noUsage = () => ({ pendingRequests: 0, pendingErrors: 0, droppedRequests: 0, droppedErrors: 0 });
const NO_HISTORY_BACKLOG = { pendingCandles: 0, droppedCandles: 0, busySeconds: 0 };

/**
 * How this leadership's history writes are fenced: by its lease epoch, so a
 * leader that paused past its lease cannot overwrite its successor's candles
 * (none for a single process, whose token has no epoch). A refused write hands
 * the lease back, to be taken again with an epoch above the store's.
 */
function leaderFence(lease: LeaderLease | null, logger: Logger): RecorderFence | null {
  const epoch = lease ? epochOf(lease.token) : null;
  if (lease === null || epoch === null) return null;
  return {
    epoch,
    onRefused: (fence) => {
      logger.warn({ part: 'history', epoch, fence }, 'history write refused: a leader with a newer epoch has written; this leadership stops recording');
      void lease.respectFence(fence);
    },
  };
}

/**
 * The demo's past (src/demo/backfill.ts), for a history that was empty before
 * anything was recorded: written once, by the first spell of leadership,
 * beside the serving process (one reference per transaction, yielding
 * between) once the server listens, and continued by that spell's recorder
 * and engine.
 */
function demoPast(wanted: boolean, store: Store, catalogue: Catalogue, time: ZoneTime, logger: Logger) {
  let listen!: () => void;
  const listened = new Promise<void>((resolve) => (listen = resolve));
  let pending = wanted;
  let stopping = false;
  let written: Promise<BackfillSummary | null> = Promise.resolve(null);
  return {
    recording(continuation: PastContinuation, until: number, ended: () => boolean): void {
      if (!pending) return;
      pending = false;
      const stopped = () => stopping || ended();
      written = listened
        .then(() => (stopped() ? null : writeDemoPast(store.history, catalogue, time, logger, { until, continuation, stopped })))
        .catch((error: unknown) => {
          logger.warn({ part: 'demo', reason: describeStoreError(error) }, 'demo: history backfill stopped; the past stays partial');
          return null;
        });
    },
    listening(): Promise<BackfillSummary | null> {
      listen();
      return written;
    },
    async stop(): Promise<void> {
      stopping = true;
      listen();
      await written;
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

/**
 * Only on a store with no account at all: a `demo` account on `pro`, whose key
 * is returned once. Nodes starting together on one database may race for it:
 * the one whose insert loses shows no key.
 */
async function ensureDemoAccount(store: Store, logger: Logger): Promise<string | null> {
  if ((await store.accounts.count()) > 0) return null;
  try {
    const account = await store.accounts.create('demo', 'pro');
    const issued = await store.keys.issue(account.id, { label: 'demo' });
    return issued.key;
  } catch (error) {
    if (!(await store.accounts.find('demo').catch(() => null))) throw error;
    logger.info({ part: 'demo' }, 'the demo account was created by another node');
    return null;
  }
}
