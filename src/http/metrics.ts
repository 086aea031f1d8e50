import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SnapshotHistory } from '../live/history.js';
import type { SourceHealth } from '../sources/monitor.js';

export interface Metrics {
  registry: Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** Prometheus metrics: requests by route and status, latency, and source ages read at scrape time. */
export function createMetrics(sourceHealth: (now: number) => SourceHealth[], snapshots: () => SnapshotHistory): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'nerkh_' });
  const requests = new Counter({ name: 'nerkh_http_requests_total', help: 'HTTP requests by route, method and status', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const latency = new Histogram({
    name: 'nerkh_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
    registers: [registry],
  });
  new Gauge({
    name: 'nerkh_source_age_seconds',
    help: 'Age of each source’s kept data',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(Date.now())) if (source.age_seconds !== null) this.set({ source: source.name }, source.age_seconds);
    },
  });
  new Gauge({
    name: 'nerkh_source_up',
    help: '1 when the source is active, 0.5 degraded, 0 down',
    labelNames: ['source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sourceHealth(Date.now())) this.set({ source: source.name }, source.state === 'active' ? 1 : source.state === 'degraded' ? 0.5 : 0);
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
  return {
    registry,
    observe(route, method, status, seconds) {
      requests.inc({ route, method, status });
      latency.observe({ route }, seconds);
    },
  };
}
