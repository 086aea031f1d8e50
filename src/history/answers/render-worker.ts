import { move, transferableSymbol, valueSymbol } from 'piscina';
import type { Candle } from '../../domain/candle.js';
import { ZoneTime } from '../../domain/time.js';
import { compress, MIN_COMPRESSED_BYTES, type Encoding } from '../../render/compression.js';
import type { StoreLocation } from '../../store/candle-tables.js';
import { carryStoreError, type CarriedStoreError } from '../../store/errors.js';
import { allThreadsArrived, type EachThreadTask } from '../../threads/pool.js';
import type { BlockCacheBounds } from '../ranges/block-cache.js';
import { Buckets } from '../ranges/buckets.js';
import { RangeRenderer, type CandleSource } from '../ranges/range-render.js';
import { closeStoredRanges, storedRange } from '../ranges/stored-range.js';
import { renderHistory, type HistoryBodyHead } from './history-body.js';

/** One history answer to render, as the event loop hands it over. */
export interface HistoryRenderTask {
  location: StoreLocation;
  timeZone: string;
  head: HistoryBodyHead;
  now: number;
  generatedAt: string;
  /** Also the body in this coding (when it is over the compression threshold). */
  encoding: Encoding | null;
  /** The event loop's cache generation: a new one empties this worker's blocks (a new revision, a new recorder). */
  generation: number;
  liveVersion: number | null;
  /** The recorder's newest candles of the reference at the interval's grain. */
  recent: Candle[];
  /** This worker's share of the block cache's bounds. */
  bounds: BlockCacheBounds;
}

/** The answer: body bytes, their compressed form when asked, and the ETag, as the in-thread renderer makes them. */
export interface HistoryRendered {
  etag: string;
  body: Uint8Array;
  /** Whether the body is worth compressing (over the threshold in characters, as for bodies rendered on the event loop). */
  compressible: boolean;
  encoded: Uint8Array | null;
}

/**
 * Runs in a worker thread: reads the candles over the worker's own
 * connection, renders them through the worker's own block cache, and makes
 * the body bytes and their compressed form, so the event loop only writes
 * them. The bytes are moved back, not copied.
 */
let renderer: { renderer: RangeRenderer; timeZone: string; generation: number } | null = null;

function rendererFor(task: HistoryRenderTask): RangeRenderer {
  if (!renderer || renderer.timeZone !== task.timeZone) {
    renderer = { renderer: new RangeRenderer(new Buckets(new ZoneTime(task.timeZone)), task.bounds), timeZone: task.timeZone, generation: task.generation };
  } else if (renderer.generation !== task.generation) {
    renderer.renderer.clear();
    renderer.generation = task.generation;
  }
  return renderer.renderer;
}

export default async function renderHistoryAnswer(task: HistoryRenderTask): Promise<unknown> {
  const range = rendererFor(task);
  const time = new ZoneTime(task.timeZone);
  const read = storedRange(task.location);
  const { head } = task;
  const source: CandleSource = { stored: read, recent: () => task.recent, liveVersion: task.liveVersion };
  let candles;
  try {
    candles = head.from < head.to ? await range.rendered(source, head.reference.key, head.interval, head.from, head.to, task.now, head.toman === true) : { json: '', count: 0, hash: 0 };
  } catch (error) {
    return carryStoreError(error) satisfies CarriedStoreError;
  }
  const { body, etag } = renderHistory(head, candles, time, task.generatedAt);
  const compressible = body.length > MIN_COMPRESSED_BYTES;
  const plain = own(Buffer.from(body));
  const encoded = task.encoding !== null && compressible ? own(compress(Buffer.from(plain.buffer), task.encoding)) : null;
  const answer: HistoryRendered = { etag, body: plain, compressible, encoded };
  return move({
    get [transferableSymbol]() {
      return encoded ? [plain.buffer, encoded.buffer] : [plain.buffer];
    },
    get [valueSymbol]() {
      return answer;
    },
  });
}

/**
 * This thread's last task (closeRenderThreads): its PostgreSQL connections
 * end as the protocol says, which ending the thread would not do (the server
 * would find their sockets dropped). Each thread runs it once.
 */
export async function closeConnections(task: EachThreadTask): Promise<void> {
  const closing = closeStoredRanges();
  await allThreadsArrived(task);
  await closing;
}

/** The bytes in an ArrayBuffer of their own: a Buffer may be a view of a shared pool, which must not be moved away. */
function own(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return copy;
}
