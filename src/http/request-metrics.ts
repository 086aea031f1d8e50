import type { Registry } from 'prom-client';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

interface RouteStats {
  /** Requests by `${method} ${status}`. */
  counts: Map<string, number>;
  /** Cumulative histogram is built at scrape time from these per-bucket counts (last slot: +Inf). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * Request counts and latency kept as plain numbers and turned into Prometheus
 * text only when scraped. prom-client's own counters hash their labels on
 * every update, which on the detail path cost more than the response itself.
 */
export class RequestMetrics {
  private readonly routes = new Map<string, RouteStats>();

  observe(route: string, method: string, status: number, seconds: number): void {
    let stats = this.routes.get(route);
    if (!stats) this.routes.set(route, (stats = { counts: new Map(), buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 }));
    const id = method === 'GET' ? STATUS_IDS[status] ?? `GET ${status}` : `${method} ${status}`;
    stats.counts.set(id, (stats.counts.get(id) ?? 0) + 1);
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket++;
    stats.buckets[bucket]!++;
    stats.sum += seconds;
    stats.count++;
  }

  register(registry: Registry): void {
    registry.registerMetric(this.counterMetric() as never);
    registry.registerMetric(this.histogramMetric() as never);
  }

  private counterMetric() {
    return {
      name: 'nerkh_http_requests_total',
      help: 'HTTP requests by route, method and status',
      get: async () => ({
        name: 'nerkh_http_requests_total',
        help: 'HTTP requests by route, method and status',
        type: 'counter',
        aggregator: 'sum',
        values: [...this.routes].flatMap(([route, stats]) =>
          [...stats.counts].map(([id, value]) => {
            const [method, status] = id.split(' ');
            return { labels: { route, method, status }, value };
          }),
        ),
      }),
    };
  }

  private histogramMetric() {
    const name = 'nerkh_http_request_duration_seconds';
    return {
      name,
      help: 'HTTP request latency by route',
      get: async () => ({
        name,
        help: 'HTTP request latency by route',
        type: 'histogram',
        aggregator: 'sum',
        values: [...this.routes].flatMap(([route, stats]) => {
          let cumulative = 0;
          const lines = BUCKETS.map((le, i) => {
            cumulative += stats.buckets[i]!;
            return { metricName: `${name}_bucket`, labels: { route, le }, value: cumulative };
          });
          lines.push({ metricName: `${name}_bucket`, labels: { route, le: '+Inf' as unknown as number }, value: stats.count });
          return [...lines, { metricName: `${name}_sum`, labels: { route }, value: stats.sum }, { metricName: `${name}_count`, labels: { route }, value: stats.count }];
        }),
      }),
    };
  }
}

/** Interned ids for the common statuses, so counting a GET builds no string. */
const STATUS_IDS: Record<number, string> = Object.fromEntries([200, 304, 400, 401, 403, 404, 405, 429, 500, 503].map((s) => [s, `GET ${s}`]));
