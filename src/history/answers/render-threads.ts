import { POOL_THREADS, ThreadPool } from '../../threads/pool.js';

/** The worker module beside this one: compiled JavaScript, or TypeScript where the sources run as they are (tests). */
const WORKER_FILE = new URL(import.meta.url.endsWith('.ts') ? './render-worker.ts' : './render-worker.js', import.meta.url).href;

/** The threads history answers are rendered in; each keeps its share of the block cache. */
export const RENDER_THREADS = POOL_THREADS;

/** History answers rendered in worker threads (render-worker.ts; tasks are HistoryRenderTask). */
export function historyRenderPool(): ThreadPool {
  // A thread reading PostgreSQL keeps a connection (stored-range.ts), closed after 30 s idle: before the thread ends idle (60 s).
  return new ThreadPool(WORKER_FILE, { holdsSockets: true });
}

/** End the render threads, each first closing the connections it reads over (render-worker.ts's `closeConnections`). */
export async function closeRenderThreads(pool: ThreadPool): Promise<void> {
  await pool.runOnEachThread('closeConnections' satisfies keyof typeof import('./render-worker.js'));
  await pool.close();
}
