import { readFileSync } from 'node:fs';

/**
 * CPU time this process's main thread (the event loop) has run, in ms: the
 * first field of Linux's per-thread schedstat, in nanoseconds. Unlike
 * `process.cpuUsage()` it leaves worker threads out, and unlike event-loop
 * utilisation it does not count time the thread was runnable but descheduled
 * (the machine may be shared).
 */
export function mainThreadCpuMs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ');
  return Number(fields[0]) / 1e6;
}
