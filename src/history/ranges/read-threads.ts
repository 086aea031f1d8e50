import type { Candle } from '../../domain/candle.js';
import type { RangeReads } from '../../store/db.js';
import { isCarriedStoreError, storeErrorOf } from '../../store/store-errors.js';
import type { LastTask, RangeTask } from './read-worker.js';
import { ThreadPool } from '../../threads/pool.js';

/** The worker module beside this one: compiled JavaScript, or TypeScript where the sources run as they are (tests). */
const WORKER_FILE = new URL(import.meta.url.endsWith('.ts') ? './read-worker.ts' : './read-worker.js', import.meta.url).href;

/**
 * SQLite range reads in worker threads (better-sqlite3 is synchronous: a
 * 1,000-candle read on the event loop holds every other request meanwhile).
 * The pool starts on the first read, so a process that never reads a range
 * (a CLI command, a server nobody asks for history) starts no thread. A
 * worker that dies fails its read with WorkerFailedError (not a store
 * error: the store may be fine); piscina starts another for the next.
 */
export class RangeReadPool implements RangeReads {
  private readonly pool = new ThreadPool(WORKER_FILE);

  constructor(private readonly file: string) {}

  read(table: string, reference: string, from: number, to: number): Promise<Candle[]> {
    const task: RangeTask = { file: this.file, table, reference, from, to };
    return this.run(task) as Promise<Candle[]>;
  }

  /** The last candle starting at or before `at` (`?at=`), read the same way. */
  lastAtOrBefore(table: string, reference: string, at: number): Promise<Candle | null> {
    const task: LastTask = { kind: 'last', file: this.file, table, reference, at };
    return this.run(task) as Promise<Candle | null>;
  }

  /** `task` on a worker: a store error is thrown as such, a worker's own failure as WorkerFailedError. */
  private async run(task: RangeTask | LastTask): Promise<unknown> {
    const result = await this.pool.run(task);
    if (isCarriedStoreError(result)) throw storeErrorOf(result);
    return result;
  }

  /** The worker threads running now (tests stop one to see a read fail as a worker's failure, not the store's). */
  get threads(): readonly { terminate(): Promise<number> }[] {
    return this.pool.threads;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The store's `rangeThreads` in the server: SQLite range reads on this pool. */
export const sqliteRangeThreads = (sqliteFile: string): RangeReads => new RangeReadPool(sqliteFile);
