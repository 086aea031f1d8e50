import { Counter, Gauge, Registry } from 'prom-client';
import type { Clock } from '../domain/clock.js';
import type { HistoryBacklog } from '../history/record/recorder.js';
import type { UsageBacklog } from '../usage/meter.js';
import type { RefreshTiers } from '../live/refresh-tiers.js';
import type { ClusterState } from '../render/service-status.js';
import type { SourceHealth } from '../sources/monitor.js';
import { registerProcessMetrics } from './process-metrics.js';
import { RequestMetrics } from './request-metrics.js';
import type { StreamCounts } from '../stream/hub.js';
import type { StreamWatchCounts } from '../stream/watch.js';

export interface Metrics {
  registry: Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** Background state read at scrape time. */
export interface BackgroundReadings {
  usage(): UsageBacklog;
  storeUp(): boolean;
  /** The history recorder's unwritten candles, where this process records. */
  history?(): HistoryBacklog;
  /** The nodes and Redis as this node sees them; absent in tests of a bare engine. */
  cluster?(): ClusterState;
}

/** Prometheus metrics: requests by route and status, latency, source health (age, state, lost values), store and usage backlog, read at scrape time. */
export function createMetrics(clock: Clock, sourceHealth: (now: number) => SourceHealth[], snapshots: () => RefreshTiers, background: BackgroundReadings): Metrics {
  const registry = new Registry();
  registerProcessMetrics(registry, 'nerkh_');
  const requests = new RequestMetrics();
  requests.register(registry);
  new Gauge({
    name: 'nerkh_source_age_seconds',
    help: 'Age of each source’s kept data',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) if (source.age_seconds !== null) this.set({ source: source.name }, source.age_seconds);
    },
  });
  new Gauge({
    name: 'nerkh_source_up',
    help: '1 when the source is active, 0.5 degraded, 0 down',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) this.set({ source: source.name }, source.state === 'active' ? 1 : source.state === 'degraded' ? 0.5 : 0);
    },
  });
  new Gauge({
    name: 'nerkh_source_values_dropped',
    help: 'Items dropped from each source’s latest document: not a positive finite number, or a bad or future timestamp',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) this.set({ source: source.name }, source.dropped);
    },
  });
  new Gauge({
    name: 'nerkh_source_values_out_of_range',
    help: 'Values each source holds outside their reference’s sanity band (never served)',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) this.set({ source: source.name }, source.out_of_range);
    },
  });
  new Gauge({
    name: 'nerkh_source_values_outliers',
    help: 'Fresh values of each source rejected as outliers against the other sources in the latest build (never served)',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) this.set({ source: source.name }, source.outliers);
    },
  });
  new Counter({
    name: 'nerkh_source_outliers_total',
    help: 'Values of each source rejected as outliers since start, each counted when first rejected',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) this.inc({ source: source.name }, source.outliers_total);
    },
  });
  new Gauge({
    name: 'nerkh_source_values_held',
    help: 'Fresh values of each source held as an unconfirmed jump in the latest build (max_jump_percent)',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(clock.now())) this.set({ source: source.name }, source.held);
    },
  });
  new Gauge({
    name: 'nerkh_rates',
    help: 'References by rate status in the latest snapshot',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      const { counts } = snapshots().latest();
      for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'nerkh_snapshot_version',
    help: 'Version of the newest snapshot this node serves (the id of stream events built from it; grows across restarts and ingest leaders)',
    registers: [registry],
    collect() {
      this.set(snapshots().latest().version);
    },
  });
  new Gauge({
    name: 'nerkh_snapshot_built_at_seconds',
    help: 'When the latest snapshot was built, Unix time with millisecond resolution (the bench times stream delivery from it)',
    registers: [registry],
    collect() {
      this.set(snapshots().latest().builtAt / 1000);
    },
  });
  new Gauge({
    name: 'nerkh_store_up',
    help: '1 while the account and usage store answers, 0 while it does not (serving goes on from memory)',
    registers: [registry],
    collect() {
      this.set(background.storeUp() ? 1 : 0);
    },
  });
  const cluster = background.cluster;
  if (cluster) {
    new Gauge({
      name: 'nerkh_ingest_leader',
      help: '1 while this node is the ingest leader (reads the sources and publishes snapshots), else 0',
      registers: [registry],
      collect() {
        const state = cluster();
        this.set(state.nodes.some((node) => node.id === state.self && node.leader) ? 1 : 0);
      },
    });
    new Gauge({
      name: 'nerkh_nodes',
      help: 'Live nodes of the deployment, as this node last saw them',
      registers: [registry],
      collect() {
        this.set(cluster().nodes.length);
      },
    });
    new Counter({
      name: 'nerkh_snapshots_refused_total',
      help: 'Snapshot messages from Redis this node refused since start (not a snapshot, or a value, status or time failing its check); it goes on serving the last good one',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cluster().refusedSnapshots);
      },
    });
    new Gauge({
      name: 'nerkh_redis_up',
      help: '1 while Redis answers, 0 while it does not (each node then serves its latest snapshot and limits keys to its share); absent without Redis',
      registers: [registry],
      collect() {
        this.reset();
        const redis = cluster().redis;
        if (redis !== null) this.set(redis === 'active' ? 1 : 0);
      },
    });
  }
  // The backlogs of usage and (where this node records it) history, read at scrape time; a reading of undefined leaves the gauge unset.
  const backlogs: [string, string, () => number | undefined][] = [
    ['nerkh_usage_pending_requests', 'Requests counted in memory and not yet written to the store', () => background.usage().pendingRequests],
    ['nerkh_usage_pending_error_entries', 'Error-log entries (one per account, service, error and minute) held in memory and not yet written to the store; the running minute is written once it has passed', () => background.usage().pendingErrors],
    ['nerkh_usage_dropped_requests', 'Requests since start whose usage count was dropped because the in-memory buffer was full', () => background.usage().droppedRequests],
    ['nerkh_usage_dropped_error_entries', 'Error-log entries since start dropped because the in-memory buffer was full', () => background.usage().droppedErrors],
    ['nerkh_history_pending_candles', 'History candles (minute, hour, day) changed in memory and not yet written to the store', () => background.history?.().pendingCandles],
    ['nerkh_history_dropped_candles', 'Minute candles since start dropped because the in-memory buffer was full while the store was away', () => background.history?.().droppedCandles],
    ['nerkh_history_recording_busy_seconds', 'Seconds since start the recorder held the event loop: recording served values and handing batches to the store (with SQLite the whole write)', () => background.history?.().busySeconds],
  ];
  for (const [name, help, read] of backlogs) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const value = read();
        if (value !== undefined) this.set(value);
      },
    });
  }
  return {
    registry,
    observe: (route, method, status, seconds) => requests.observe(route, method, status, seconds),
  };
}

/** Push streams, read at scrape time: open now, events sent and subscribers dropped since start. */
export function registerStreamMetrics(registry: Registry, counts: () => StreamCounts, watched: () => StreamWatchCounts): void {
  new Gauge({
    name: 'nerkh_streams_open',
    help: 'Open push streams (GET /v1/stream) on this process',
    registers: [registry],
    collect() {
      this.set(counts().open);
    },
  });
  new Gauge({
    name: 'nerkh_stream_events_sent_total',
    help: 'Stream events written to subscribers since start',
    registers: [registry],
    collect() {
      this.set(counts().events);
    },
  });
  new Gauge({
    name: 'nerkh_stream_alerts_sent_total',
    help: 'Stream alert events (?alerts= rules that became true) written to subscribers since start',
    registers: [registry],
    collect() {
      this.set(counts().alerts);
    },
  });
  new Gauge({
    name: 'nerkh_stream_fanouts_total',
    help: 'Stream events written to every stream of a group (one per group and change) since start',
    registers: [registry],
    collect() {
      this.set(counts().fanouts.count);
    },
  });
  new Gauge({
    name: 'nerkh_stream_fanout_seconds_total',
    help: 'Time spent writing those events to every stream of their group, summed, since start',
    registers: [registry],
    collect() {
      this.set(counts().fanouts.seconds);
    },
  });
  new Gauge({
    name: 'nerkh_stream_fanout_max_seconds',
    help: 'The longest time one event took to be written to every stream of its group, since start',
    registers: [registry],
    collect() {
      this.set(counts().fanouts.maxSeconds);
    },
  });
  new Gauge({
    name: 'nerkh_stream_subscribers_dropped_total',
    help: 'Stream subscribers dropped for not reading: buffered bytes over the bound, or a buffer full past the stall time',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      for (const [reason, count] of Object.entries(counts().dropped)) this.set({ reason }, count);
    },
  });
  new Gauge({
    name: 'nerkh_stream_ended_total',
    help: 'Streams the server ended since start: refused (key revoked or expired, account suspended, plan without the stream or its references) or lifetime (max_stream_seconds reached)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      const { refused, lifetime } = watched();
      this.set({ reason: 'refused' }, refused);
      this.set({ reason: 'lifetime' }, lifetime);
    },
  });
  new Gauge({
    name: 'nerkh_stream_reselected_total',
    help: 'Open streams moved to a new selection since start, their plan having changed what they read or how often',
    registers: [registry],
    collect() {
      this.set(watched().reselected);
    },
  });
}
