import type { AccessDirectory } from '../access/directory.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { ZoneTime } from '../domain/time.js';
import type { SnapshotHistory } from '../live/history.js';
import type { CatalogueRenderer } from '../render/catalogue.js';
import type { SourceHealth } from '../sources/monitor.js';
import type { Metrics } from './metrics.js';

/** Everything the HTTP layer reads; built by the server (or a test) and passed in. */
export interface AppDeps {
  time: ZoneTime;
  catalogue: Catalogue;
  catalogueRenderer: CatalogueRenderer;
  snapshots: SnapshotHistory;
  sourceHealth(now: number): SourceHealth[];
  /** Last result of the periodic store check. */
  storeReachable(): boolean;
  directory: AccessDirectory;
  metrics: Metrics;
  logLevel?: string;
}
