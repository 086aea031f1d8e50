import type { AccessDirectory } from '../access/directory.js';
import type { FailedKeyThrottle } from '../access/failed-attempts.js';
import type { SharedLimiter } from '../access/limiter/limiter.js';
import type { StoreState } from '../store/store-health.js';
import type { UsageRepository } from '../store/usage-repository.js';
import type { UsageMeter } from '../usage/meter.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { HistoryReader } from '../history/history-reader.js';
import type { ZoneTime } from '../domain/time.js';
import type { Markets } from '../live/markets.js';
import type { RefreshTiers } from '../live/refresh-tiers.js';
import type { ClusterState } from '../render/service-status.js';
import type { SourceHealth } from '../sources/monitor.js';
import type { Logger } from '../log.js';
import type { LoadShedding } from './load-shedding.js';
import type { Metrics } from './metrics.js';
import type { StreamOptions } from '../stream/hub.js';
import type { StreamSlots } from '../stream/slots.js';
import type { WebhookOverview } from '../webhooks/overview.js';

/** Everything the HTTP layer reads; built by the server (or a test) and passed in. */
export interface AppDeps {
  time: ZoneTime;
  catalogue: Catalogue;
  snapshots: RefreshTiers;
  sourceHealth(now: number): SourceHealth[];
  /** Whether the store answered last time anything asked it. */
  storeReachable(): boolean;
  storeState(): StoreState;
  /** Report a store failure met while serving a request: the store counts as down until its next ping succeeds. */
  storeFailed(error: unknown): void;
  directory: AccessDirectory;
  metrics: Metrics;
  limiter: SharedLimiter;
  failedAttempts: FailedKeyThrottle;
  /** The nodes and Redis as this node sees them (docs/operations.md#what-is-shared), for the status endpoints and /metrics. */
  cluster(): ClusterState;
  meter: UsageMeter;
  usage: UsageRepository;
  /** An account's webhook endpoints and delivery log (GET /v1/webhooks); reads the store. */
  webhookOverview(accountId: string): Promise<WebhookOverview>;
  history: HistoryReader;
  logger: Logger;
  /** Overload thresholds over the defaults (DEFAULT_LOAD_SHEDDING). */
  loadShedding?: Partial<LoadShedding>;
  /** Open streams per account across nodes; in-process unless given (Redis-backed when shared). */
  streamSlots?: StreamSlots;
  /** Stream timings and bounds over the defaults (tests lower them). */
  stream?: Partial<StreamOptions>;
  /** Who may frame the HTML pages: the CSP's `frame-ancestors` source list (NERKH_FRAME_ANCESTORS). */
  frameAncestors: string;
  /** The bearer token `/metrics` asks for (NERKH_METRICS_TOKEN); null: open. */
  metricsToken: string | null;
  /** What the node waits for before it holds rates, in words (`/readyz` says it); null when nothing, or unknown. */
  waitingFor?(now: number): string | null;
  /** The markets and their calendars (`/v1/calendar`, the status page, the board); the built-in ones, without closures declared, unless given. */
  markets?: Markets;
}
