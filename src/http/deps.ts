import type { AccessDirectory } from '../access/directory.js';
import type { FailedKeyThrottle } from '../access/failed-attempts.js';
import type { SharedLimiter } from '../access/limiter/limiter.js';
import type { StoreState } from '../store/health.js';
import type { UsageRepository } from '../store/usage.js';
import type { UsageMeter } from '../usage/meter.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { HistoryReader } from '../history/reader.js';
import type { ZoneTime } from '../domain/time.js';
import type { SnapshotHistory } from '../live/history.js';
import type { CatalogueRenderer } from '../render/catalogue.js';
import type { DetailRenderer } from '../render/detail.js';
import type { LegacyRenderer } from '../render/legacy.js';
import type { ClusterState } from '../render/status.js';
import type { SourceHealth } from '../sources/monitor.js';
import type { Logger } from '../log.js';
import type { LoadShedding } from './load-shedding.js';
import type { Metrics } from './metrics.js';
import type { StreamOptions } from '../stream/hub.js';
import type { StreamSlots } from '../stream/slots.js';

/** Everything the HTTP layer reads; built by the server (or a test) and passed in. */
export interface AppDeps {
  time: ZoneTime;
  catalogue: Catalogue;
  catalogueRenderer: CatalogueRenderer;
  detailRenderer: DetailRenderer;
  legacyRenderer: LegacyRenderer;
  snapshots: SnapshotHistory;
  sourceHealth(now: number): SourceHealth[];
  /** Whether the store answered last time anything asked it. */
  storeReachable(): boolean;
  storeState(): StoreState;
  directory: AccessDirectory;
  metrics: Metrics;
  limiter: SharedLimiter;
  failedAttempts: FailedKeyThrottle;
  /** The nodes and Redis as this node sees them (PRODUCT §10), for the status endpoints and /metrics. */
  cluster(): ClusterState;
  meter: UsageMeter;
  usage: UsageRepository;
  history: HistoryReader;
  logger: Logger;
  /** Overload thresholds over the defaults (DEFAULT_LOAD_SHEDDING). */
  loadShedding?: Partial<LoadShedding>;
  /** Open streams per account across nodes; in-process unless given (Redis-backed when shared). */
  streamSlots?: StreamSlots;
  /** Stream timings and bounds over the defaults (tests lower them). */
  stream?: Partial<StreamOptions>;
}
