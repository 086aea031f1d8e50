import cluster, { type Worker } from 'node:cluster';
import { loadConfig } from './config.js';

/** Past this the primary stops waiting for its workers' drains (each drains within 10 s itself). */
const STOP_LIMIT_MS = 12_000;
/** A worker that lived at least this long is restarted at once; one that keeps dying sooner, after a growing pause. */
const STEADY_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * `nerkh serve --workers N`: a primary that forks N serving processes on this
 * host (node:cluster; they share the port), restarts a worker that dies, and
 * on SIGTERM or SIGINT passes the signal on and waits for every drain. Each
 * worker is a full node of its own, so the limits, change notices and
 * snapshots it shares with its siblings go through Redis, which is why this
 * needs `NERKH_REDIS_URL`. Ingest: every worker takes the given role (`all`
 * by default), and the lease picks one of them (or a node elsewhere) to ingest.
 *
 * The first worker starts alone, so that it migrates a new database and takes
 * the lease before its siblings come up.
 */
export async function runWorkers(count: number, argv: string[]): Promise<void> {
  // The primary reads the config once too, so a bad one stops here with one message rather than N crash loops.
  loadConfig();
  cluster.setupPrimary({ args: argv });
  let stopping = false;
  let failures = 0;
  const startedAt = new Map<Worker, number>();

  const fork = (): Worker => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) {
        console.log('nerkh: every worker stopped');
        process.exit(0);
      }
      return;
    }
    failures = lived >= STEADY_MS ? 0 : failures + 1;
    const delay = failures === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 500 * 2 ** failures);
    console.error(`nerkh: worker ${worker.process.pid} ended (${signal ?? `exit ${code}`}); starting another${delay > 0 ? ` in ${delay} ms` : ''}`);
    setTimeout(() => {
      if (!stopping) fork();
    }, delay);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`nerkh: ${signal} received, stopping ${startedAt.size} workers`);
    for (const worker of startedAt.keys()) worker.process.kill('SIGTERM');
    if (startedAt.size === 0) process.exit(0);
    setTimeout(() => {
      console.error('nerkh: workers took too long to stop; exiting');
      for (const worker of startedAt.keys()) worker.process.kill('SIGKILL');
      process.exit(0);
    }, STOP_LIMIT_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  console.log(`nerkh: primary ${process.pid} starting ${count} workers`);
  const first = fork();
  await new Promise<void>((resolve) => {
    first.once('listening', () => resolve());
    first.once('exit', () => resolve());
  });
  for (let i = 1; i < count && !stopping; i++) fork();
}
