import { availableParallelism } from 'node:os';
import type { ResourceLimits, TransferListItem } from 'node:worker_threads';
import { Piscina } from 'piscina';

/**
 * A worker thread failed while it served a task (it died, was stopped, or
 * threw outside the task's own code): whatever the task read, a store or a
 * document, may be fine, so this is never taken for it being away. The pool
 * starts another thread.
 */
export class WorkerFailedError extends Error {
  constructor(cause: unknown) {
    super(`worker thread failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** How long after a thread failed to start, with none running, tasks are refused at once. */
const FAILING_REFUSE_MS = 10_000;

/** Threads per pool: one core is left to the event loop, at least one thread. */
export const POOL_THREADS = Math.max(1, availableParallelism() - 1);

/** What a pool may differ in: at most how many threads, and each thread's memory limits. */
export interface ThreadPoolOptions {
  /** Default POOL_THREADS. */
  maxThreads?: number;
  /** Per thread; a thread past them ends, failing its task (ERR_WORKER_OUT_OF_MEMORY), and another is started. */
  resourceLimits?: ResourceLimits;
  /** Added to each thread's nice value (Linux), so its work yields the cores to the event loop; default 0. */
  niceIncrement?: number;
  /**
   * The threads hold sockets (PostgreSQL pools) whose timers must run between
   * tasks: an idle thread then waits with its event loop turning (piscina's
   * `atomics: 'async'`) rather than blocked, so a connection idle past its
   * timeout is closed properly before the thread itself ends idle.
   */
  holdsSockets?: boolean;
}

/** What one task may carry: a signal that stops it (ending the thread it runs on), and buffers moved rather than copied. */
export interface TaskOptions {
  signal?: AbortSignal;
  transferList?: TransferListItem[];
}

/**
 * A piscina pool of worker threads, started on the first task and kept while
 * tasks come (idle threads end after a minute): a process that never asks
 * starts no thread, and pays neither a thread's start (about 150 ms of CPU)
 * nor its memory (some 10 MB each). A worker that dies fails its task with
 * WorkerFailedError, not as the work's own error, and piscina starts another
 * for the next.
 */
export class ThreadPool {
  private pool: Piscina | null = null;
  /** Tasks running now. */
  running = 0;

  constructor(
    private readonly filename: string,
    private readonly options: ThreadPoolOptions = {},
  ) {}

  /** Errors of threads outside any task (a thread that could not start), the first one kept. */
  readonly outsideTasks = { count: 0, first: null as Error | null };
  /** When the latest such error came, unless a task has succeeded since (a thread started after all). */
  private failingSince: number | null = null;

  /** `task` on a thread; any failure (the task's own error, its thread's end, its signal) is thrown as WorkerFailedError, whose `cause` says which. */
  async run(task: unknown, options: TaskOptions = {}): Promise<unknown> {
    this.pool ??= this.start({ minThreads: 0, maxThreads: this.options.maxThreads ?? POOL_THREADS, idleTimeout: 60_000 });
    // Threads failing as they start and none running: the task would wait for a thread that never comes.
    // Only for a while after such a failure, so one passing failure does not refuse every later task.
    if (this.failingSince !== null && Date.now() - this.failingSince < FAILING_REFUSE_MS && this.pool.threads.length === 0) {
      throw new WorkerFailedError(this.outsideTasks.first);
    }
    this.running++;
    try {
      const result = await this.pool.run(task, options);
      this.failingSince = null;
      return result;
    } catch (error) {
      throw new WorkerFailedError(error);
    } finally {
      this.running--;
    }
  }

  /**
   * Piscina emits a thread's error outside a task (one that failed as it
   * started, say) as an 'error' event, which unheard ends the process: here it
   * is counted and the first one written to stderr once, and the tasks fail as
   * WorkerFailedError (503) while no thread can run them.
   */
  private start(sizes: { minThreads: number; maxThreads: number; idleTimeout?: number }): Piscina {
    const pool = new Piscina({ filename: this.filename, ...sizes, resourceLimits: this.options.resourceLimits, niceIncrement: this.options.niceIncrement ?? 0, atomics: this.options.holdsSockets ? 'async' : 'sync' });
    pool.on('error', (error: Error) => {
      this.failingSince = Date.now();
      if (this.outsideTasks.count++ === 0) {
        this.outsideTasks.first = error;
        process.emitWarning(`a worker thread (${this.filename}) failed outside a task: ${error.message}`, 'ThreadPoolWarning');
      }
    });
    return pool;
  }

  /**
   * The worker module's export `name` run once on each thread running now,
   * as a last task before `close` ends them (a thread cannot run code as it
   * is ended): each run holds its thread until every thread has taken one
   * (at most `waitMs`; `allThreadsArrived`), so no thread takes two while
   * another takes none. Failures are ignored: the threads end regardless.
   */
  async runOnEachThread(name: string, waitMs = 1_000): Promise<void> {
    const pool = this.pool;
    const count = pool?.threads.length ?? 0;
    if (!pool || count === 0) return;
    const task: EachThreadTask = { arrived: new Int32Array(new SharedArrayBuffer(4)), count, waitMs };
    await Promise.allSettled(Array.from({ length: count }, () => pool.run(task, { name })));
  }

  /** The worker threads running now (tests stop one to see the pool recover). */
  get threads(): readonly { terminate(): Promise<number> }[] {
    return this.pool?.threads ?? [];
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
  }
}

/** What each thread's run of `runOnEachThread` gets: a count of the threads that have taken theirs, shared by all. */
export interface EachThreadTask {
  arrived: Int32Array;
  count: number;
  waitMs: number;
}

/** In a worker's run of `runOnEachThread`: count this thread in, then wait until every thread has (or the wait is over). */
export async function allThreadsArrived(task: EachThreadTask): Promise<void> {
  Atomics.add(task.arrived, 0, 1);
  const until = Date.now() + task.waitMs;
  while (Atomics.load(task.arrived, 0) < task.count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 2));
}
