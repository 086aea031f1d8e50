import type { AccessDirectory } from '../access/directory.js';
import { buildProbeApp, type AppDeps } from '../app.js';
import type { AppConfig } from '../config.js';
import { loadReferenceData } from '../config-checks.js';
import type { BackfillSummary } from '../demo/backfill.js';
import { ShiftedClock, type Clock } from '../domain/clock.js';
import { ZoneTime } from '../domain/time.js';
import { openHistory } from '../history/open.js';
import { CalendarSync } from '../live/calendar-sync.js';
import { Markets } from '../live/markets.js';
import { createMetrics } from '../http/metrics.js';
import { createLogger, type Logger } from '../log.js';
import { openBackends } from '../roles/backends.js';
import { SnapshotFeed } from '../roles/feed.js';
import { IngestRole } from '../roles/ingest.js';
import type { Role } from '../roles/role.js';
import { startServing } from '../roles/serving.js';
import { describeStoreError } from '../store/store-errors.js';
import type { Store } from '../store/store.js';
import type { FastifyInstance } from 'fastify';
import { keyHintFor, type KeyHint } from './start-hint.js';
import { ensureDemoAccount } from './demo-account.js';
import { demoPast } from './demo-past.js';
import { leaderFence } from './leader-fence.js';
import { logStoreChanges } from './store-log.js';
import { waitingFor } from './readiness.js';
import { openStoreWaiting } from './wait-for-store.js';
import { openWebhookTerm } from '../webhooks/leadership.js';
import { epochOf } from '../bus/lease.js';
import { DEFAULT_LOAD_SHEDDING } from '../http/load-shedding.js';

/** How often the store is pinged: how soon `/readyz` and the status page see it leave or return. */
const STORE_CHECK_MS = 1000;

export interface Runtime {
  app: FastifyInstance;
  store: Store;
  /** The key directory; null for an ingest-only process, which serves no keyed request. */
  directory: AccessDirectory | null;
  /** The key of the demo account, when this start created it. */
  demoKey: string | null;
  /** When no key was created, how to get one; null for an ingest-only process, or when the store could not say. */
  keyHint: KeyHint | null;
  /**
   * Work that waits until the server listens: the demo's 30-day past on a
   * first start (empty history), written while this node records. Resolves
   * when it is done and loaded by the recorder; safe to call twice.
   */
  startBackground(): Promise<BackfillSummary | null>;
  /** What the node waits for before it holds rates, in words; null when it holds them (docs/operations.md#roles). */
  waitingFor(): string | null;
  /** Resolves once the node holds rates (at once if it does). */
  whenReady(): Promise<void>;
  /** Hand the ingest lease over at once, before the drain (another node takes over while this one finishes its requests). */
  stepDown(): Promise<void>;
  close(options?: { dropSchema?: boolean }): Promise<void>;
}

export interface RuntimeOptions {
  /** What this process does (docs/operations.md#roles); `all` unless set. */
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
 *   serve (roles `all`, `api`):      bus → refresh tiers → HTTP
 *
 * Without Redis the bus, lease, limiter and notices are in-process twins:
 * one process leads and serves, exactly as a single server always did.
 */
export async function startRuntime(config: AppConfig, options: RuntimeOptions = {}): Promise<Runtime> {
  const role = options.role ?? 'all';
  const time = new ZoneTime(config.timezone, options.clock ?? (config.clockShiftMs ? new ShiftedClock(config.clockShiftMs) : undefined));
  const logger = options.logger ?? createLogger(config.logLevel);
  // Test-only knobs, said aloud: a node running on them would disagree with its peers on windows, days and ages.
  if (config.clockShiftMs) logger.warn({ shiftMs: config.clockShiftMs }, 'NERKH_CLOCK_SHIFT_MS is set: this node reads a shifted clock (for tests only)');
  if (config.webhooks.timeScale !== 1) logger.warn({ timeScale: config.webhooks.timeScale }, 'NERKH_WEBHOOK_TIME_SCALE is set: webhook durations are scaled (for tests only)');
  const { catalogue, plans, sourcePriority, screening, derived, marketOf } = loadReferenceData(config);
  const markets = new Markets(config.markets, marketOf);

  const store = await openStoreWaiting(config, options, time, logger);
  logStoreChanges(store, logger, time.clock);
  const storeCheck = setInterval(() => void store.ping(time.now()), STORE_CHECK_MS);
  storeCheck.unref();

  const backends = openBackends(config, role, time, logger);
  // A Redis that lost its epoch counter must not hand out an epoch the history (or the webhook states) has already seen.
  await backends.lease?.respectFence(
    await Promise.all([store.history.fence(), store.webhooks.fence()])
      .then((fences) => Math.max(...fences))
      .catch((error: unknown) => {
        logger.warn({ part: 'history', reason: describeStoreError(error) }, 'history fence not readable at start; a refused write will raise it');
        return 0;
      }),
  );
  await backends.start();
  // Every node keeps the operators' closures and openings as the store has them, from the start on.
  const calendarSync = new CalendarSync(markets, store.calendar, backends.notices, logger);
  await calendarSync.start();

  // History: only the ingest leader records (a recorder per spell of leadership); every serving node reads the store.
  // Webhooks: only the ingest leader evaluates alerts and sends, fenced by its epoch like the history.
  const openWebhooks = () =>
    openWebhookTerm({
      store,
      catalogue,
      plans,
      time,
      logger,
      allowPrivate: config.webhooks.allowPrivate,
      timeScale: config.webhooks.timeScale,
      epoch: backends.lease ? epochOf(backends.lease.token) : null,
      onFenced: (fence) => void backends.lease?.respectFence(fence),
    });
  const openRecorder = () => openHistory(store, time, config.history.minuteDays, logger, undefined, leaderFence(backends.lease, logger)).recorder;
  const past = demoPast(config.demo && backends.lease !== null && (await store.history.isEmpty().catch(() => false)), store, catalogue, time, logger);
  const ingest = backends.lease
    ? new IngestRole({
        id: backends.id,
        config,
        catalogue,
        sourcePriority,
        screening,
        derived,
        time,
        logger,
        lease: backends.lease,
        bus: backends.bus,
        openRecorder,
        historyWriter: past.writer,
        openWebhooks,
        manualPrices: store.manualPrices,
        notices: backends.notices,
        markets,
      })
    : null;

  const longest = Math.max(...[...plans.values()].map((plan) => plan.refresh_interval_seconds));
  const feed = new SnapshotFeed({ bus: backends.bus, time, sources: config.sources, longestIntervalSeconds: longest, localHealth: (now) => ingest?.health(now) ?? null, derived, markets });
  feed.start();
  // A node that leads now starts listening with its first snapshot built; any other serves what the bus brings.
  await ingest?.start();
  const waiting = (now: number) => waitingFor({ backends, snapshots: feed.snapshots, sourceHealth: (at) => feed.sourceHealth(at) }, now);

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
          loadShedding: options.loadShedding ?? { ...DEFAULT_LOAD_SHEDDING, maxEventLoopDelayMs: config.shedAfterLagMs, maxEventLoopUtilization: config.shedAtBusyPercent / 100 },
          stream: options.stream,
          directoryPollMs: options.directoryPollMs,
          frameAncestors: config.frameAncestors,
          metricsToken: config.metricsToken,
          waitingFor: waiting,
          markets,
        });
  // Only the built-in setup makes the demo account: a deployment that has a config makes its own accounts.
  const demoKey = config.demo && config.configPath === null && served ? await ensureDemoAccount(store, logger) : null;
  // The key printed must work at once, not from the directory's next poll.
  if (demoKey) await served?.directory.load();
  const keyHint = served && !demoKey ? await keyHintFor(config, store).catch(() => null) : null;
  const app =
    served?.app ??
    (await buildProbeApp({
      time,
      logger,
      snapshots: feed.snapshots,
      storeReachable: () => store.health.reachable,
      metricsToken: config.metricsToken,
      waitingFor: waiting,
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
    keyHint,
    // The past is there for queries once the recorder has loaded it (and folded in what it recorded meanwhile).
    startBackground: async () => {
      const summary = await past.listening();
      await ingest?.recorder?.load();
      return summary;
    },
    waitingFor: () => waiting(time.now()),
    whenReady: () =>
      new Promise<void>((resolve) => {
        if (waiting(time.now()) === null) return resolve();
        const stop = feed.snapshots.onPush(() => {
          if (waiting(time.now()) !== null) return;
          stop();
          resolve();
        });
      }),
    stepDown,
    async close(closeOptions = {}) {
      await past.stop();
      await stepDown();
      await app.close();
      await served?.close();
      feed.stop();
      calendarSync.stop();
      await backends.close();
      clearInterval(storeCheck);
      await store.close(closeOptions);
    },
  };
}

const noUsage = () => ({ pendingRequests: 0, pendingErrors: 0, droppedRequests: 0, droppedErrors: 0 });
const NO_HISTORY_BACKLOG = { pendingCandles: 0, droppedCandles: 0, busySeconds: 0 };
