import { readdirSync, statSync } from 'node:fs';
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';

/**
 * prom-client's process and runtime metrics, less the ones whose cost grows with every open
 * socket: the open-handle and open-resource counts by type list every handle at each scrape, and
 * the open descriptors were counted by listing /proc/self/fd. With 10,000 streams a scrape cost
 * about 100 ms of the event loop (measured on the 2-core machine: 114 ms a scrape beside 10,000
 * open sockets, 4 ms without these five).
 * The descriptor count stays, from one stat call (see `openDescriptors`);
 * `nerkh_streams_open` counts the open streams.
 */
const PER_HANDLE = ['process_open_fds', 'nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total'];

export function registerProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix });
  for (const name of PER_HANDLE) registry.removeSingleMetric(prefix + name);
  if (process.platform !== 'linux') return;
  new Gauge({
    name: `${prefix}process_open_fds`,
    help: 'Number of open file descriptors.',
    registers: [registry],
    collect() {
      this.set(openDescriptors());
    },
  });
}

/**
 * Linux 6.2 and later give the number of open descriptors as the size of /proc/self/fd, in one
 * stat call; earlier kernels give 0 there, and then the directory is listed (the cost above).
 */
function openDescriptors(): number {
  try {
    const size = statSync('/proc/self/fd').size;
    return size > 0 ? size : readdirSync('/proc/self/fd').length - 1;
  } catch {
    return 0;
  }
}
