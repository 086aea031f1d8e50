import { AccessDirectory } from '../access/directory.js';
import { buildApp, type AppDeps } from '../app.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { HistoryReader } from '../history/history-reader.js';
import type { HistoryBacklog } from '../history/record/recorder.js';
import type { Plan } from '../domain/plan.js';
import type { ZoneTime } from '../domain/time.js';
import { createMetrics } from '../http/metrics.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { RedisStreamSlots } from '../stream/redis-slots.js';
import { UsageMeter, type UsageLoss } from '../usage/meter.js';
import type { FastifyInstance } from 'fastify';
import { webhookOverview } from '../webhooks/overview.js';
import type { Backends } from './backends.js';
import type { SnapshotFeed } from './feed.js';

export interface ServeOptions {
  catalogue: Catalogue;
  plans: ReadonlyMap<string, Plan>;
  time: ZoneTime;
  logger: Logger;
  store: Store;
  backends: Backends;
  feed: SnapshotFeed;
  history: HistoryReader;
  /** The unwritten candles of this node's recorder (none while it does not lead). */
  historyBacklog: () => HistoryBacklog;
  loadShedding?: AppDeps['loadShedding'];
  stream?: AppDeps['stream'];
  /** How often the key directory polls the store's revision (the fallback for a lost change notice). */
  directoryPollMs?: number;
  frameAncestors: AppDeps['frameAncestors'];
  metricsToken: AppDeps['metricsToken'];
  waitingFor: AppDeps['waitingFor'];
  /** The markets' calendars (`/v1/calendar`, the status page, the board). */
  markets?: AppDeps['markets'];
}

export interface ServeRole {
  app: FastifyInstance;
  directory: AccessDirectory;
  /** After the app has closed (every request answered): write the last usage counts, stop reloading keys. */
  close(): Promise<void>;
}

/**
 * The serve role: the HTTP API (and the push streams) over the snapshots the feed receives, with
 * keys and plans in memory, the shared (or in-process) limits, and usage
 * metered into this node's own batches. The key directory reloads on every
 * change notice, and on its store poll as the fallback.
 */
export async function startServing(options: ServeOptions): Promise<ServeRole> {
  const { catalogue, plans, time, logger, store, backends, feed } = options;
  // A reload that fails keeps the last directory; the store's health says why.
  const directory = new AccessDirectory(store, plans, catalogue, (error) => store.health.failed(error, time.now()), options.directoryPollMs);
  await directory.load();
  directory.start();
  // A price change is the ingest leader's business (roles/ingest.ts); every other change may touch access.
  const stopNotices = backends.notices.onNotice((kind) => {
    if (kind !== 'prices' && kind !== 'calendar') void directory.poll();
  });

  const meter = new UsageMeter(store.usage, store.keys, time, store.health);
  meter.start();

  const sourceHealth = (now: number) => feed.sourceHealth(now);
  const cluster = () => backends.cluster(time.now());
  const metrics = createMetrics(time.clock, sourceHealth, () => feed.snapshots, {
    usage: () => meter.backlog(),
    storeUp: () => store.health.reachable,
    history: options.historyBacklog,
    cluster,
  });
  const app = await buildApp({
    time,
    catalogue,
    snapshots: feed.snapshots,
    sourceHealth,
    storeReachable: () => store.health.reachable,
    storeState: () => store.health.state,
    storeFailed: (error) => store.health.failed(error, time.now()),
    directory,
    metrics,
    limiter: backends.limiter,
    failedAttempts: backends.failedAttempts,
    cluster,
    meter,
    usage: store.usage,
    webhookOverview: (accountId) => webhookOverview(store.webhooks, accountId, time),
    history: options.history,
    logger,
    loadShedding: options.loadShedding,
    // The stream hub follows feed.snapshots (what the bus brings); a plan's max_streams holds across nodes through Redis.
    streamSlots: backends.link ? new RedisStreamSlots(backends.link, time.clock) : undefined,
    stream: options.stream,
    frameAncestors: options.frameAncestors,
    metricsToken: options.metricsToken,
    waitingFor: options.waitingFor,
    markets: options.markets,
  });

  return {
    app,
    directory,
    async close() {
      // After the last in-flight request: every request served is counted.
      const lost = await meter.stop();
      if (lost) logUsageLoss(logger, lost, meter.backlog().droppedRequests, store.health.state.error);
      stopNotices();
      directory.stop();
    },
  };
}

/** Usage the process could not write as it stops: gone with it, so say how much, once. */
function logUsageLoss(logger: Logger, lost: UsageLoss, droppedEarlier: number, reason: string | null): void {
  const why = reason ?? 'the last write failed';
  const entries = lost.errorEntries === 1 ? 'entry' : 'entries';
  const earlier = droppedEarlier > 0 ? `; ${droppedEarlier} more requests were dropped earlier, the buffer being full` : '';
  logger.error(
    { part: 'usage', lost_requests: lost.requests, lost_error_entries: lost.errorEntries, lost_errors: lost.errors, dropped_requests: droppedEarlier, reason: why },
    `usage lost at shutdown (${why}): ${lost.requests} requests not counted, ${lost.errorEntries} error-log ${entries} of ${lost.errors} failures not logged${earlier}`,
  );
}
