import { readFileSync } from 'node:fs';

/**
 * CPU time of the calling thread in milliseconds. `process.cpuUsage()` counts
 * every thread of the process (worker pools, SQLite reader threads, the
 * garbage collector's helpers), so a measure of how long the event loop was
 * held grows with whatever else the process does; this counts the one thread.
 * Node 23.9+ has `process.threadCpuUsage()`; on Node 20 Linux's own
 * per-thread counter (nanoseconds run, /proc/thread-self/schedstat) is read,
 * and elsewhere the process's figure is the best there is.
 */
export function threadCpuMs(): number {
  const own = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (own) {
    const used = own.call(process);
    return (used.user + used.system) / 1000;
  }
  if (schedstatReadable !== false) {
    try {
      const ms = Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]) / 1e6;
      schedstatReadable = true;
      return ms;
    } catch {
      schedstatReadable = false;
    }
  }
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

let schedstatReadable: boolean | undefined;
