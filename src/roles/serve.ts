import { AccessDirectory } from '../access/directory.js';
import { buildApp, type AppDeps } from '../app.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { HistoryReader } from '../history/reader.js';
import type { HistoryBacklog } from '../history/recorder.js';
import type { Plan } from '../domain/plan.js';
import type { ZoneTime } from '../domain/time.js';
import { createMetrics } from '../http/metrics.js';
import type { Logger } from '../log.js';
import { CatalogueRenderer } from '../render/catalogue.js';
import { DetailRenderer } from '../render/detail.js';
import { LegacyRenderer } from '../render/legacy.js';
import type { Store } from '../store/store.js';
import { RedisStreamSlots } from '../stream/redis-slots.js';
import { UsageMeter } from '../usage/meter.js';
import type { FastifyInstance } from 'fastify';
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
  const stopNotices = backends.notices.onNotice(() => void directory.poll());

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
    catalogueRenderer: new CatalogueRenderer(catalogue),
    detailRenderer: new DetailRenderer(catalogue),
    legacyRenderer: new LegacyRenderer(catalogue),
    snapshots: feed.snapshots,
    sourceHealth,
    storeReachable: () => store.health.reachable,
    storeState: () => store.health.state,
    directory,
    metrics,
    limiter: backends.limiter,
    failedAttempts: backends.failedAttempts,
    cluster,
    meter,
    usage: store.usage,
    history: options.history,
    logger,
    loadShedding: options.loadShedding,
    // The stream hub follows feed.snapshots (what the bus brings); a plan's max_streams holds across nodes through Redis.
    streamSlots: backends.link ? new RedisStreamSlots(backends.link, time.clock) : undefined,
    stream: options.stream,
  });

  return {
    app,
    directory,
    async close() {
      // After the last in-flight request: every request served is counted.
      await meter.stop();
      stopNotices();
      directory.stop();
    },
  };
}
