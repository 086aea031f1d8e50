import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD_BYTES } from '../../domain/cache-size.js';
import type { Candle } from '../../domain/candle.js';
import type { Reference } from '../../domain/reference.js';
import type { ZoneTime } from '../../domain/time.js';
import type { Encoding } from '../../render/compression.js';
import { isCarriedStoreError, storeErrorOf } from '../../store/errors.js';
import { WorkerFailedError } from '../../threads/pool.js';
import { unavailable, workerFailed, type HistoryReader } from '../history-reader.js';
import { BLOCK_CACHE_BOUNDS } from '../ranges/block-cache.js';
import { GRAIN_OF, type Interval } from '../ranges/buckets.js';
import { SETTLED_MS } from '../ranges/range-render.js';
import { renderHistory } from './history-body.js';
import { closeRenderThreads, historyRenderPool, RENDER_THREADS } from './render-threads.js';
import type { HistoryRendered } from './render-worker.js';

/** One history answer asked for: the range already checked and cut to the plan's window. */
export interface HistoryQuestion {
  reference: Reference;
  interval: Interval;
  from: number;
  to: number;
  toman: boolean;
  now: number;
  /** The coding the caller accepts for a body worth compressing; null: plain. */
  encoding: Encoding | null;
  /** Whether the caller already holds this ETag (If-None-Match): a held answer is then not rendered again. */
  holds(etag: string): boolean;
}

/** A history answer ready to write: the body, and its compressed form when one was made off the event loop. */
export interface HistoryAnswer {
  etag: string;
  body: string | Buffer;
  /** Whether the body is worth compressing (given when `body` is bytes; a string's length says it otherwise). */
  compressible?: boolean;
  encoded: { encoding: Encoding; body: Buffer } | null;
}

export interface LatestBounds {
  maxBytes: number;
  maxEntries: number;
}

/**
 * 16 MB and 256 answers: a 1,000-minute answer is some 150 KB plain and
 * 20 KB in each coding, so about 80 of the largest fit, enough for the
 * popular references at each interval a chart asks for.
 */
export const LATEST_BOUNDS: LatestBounds = { maxBytes: 16 * 1024 * 1024, maxEntries: 256 };

/** A range reaching the open candles, as rendered last: valid while the cache generation and the recorder's version are. */
interface LatestAnswer {
  validity: string;
  generatedAt: string;
  etag: string;
  body: Buffer;
  compressible: boolean;
  encoded: Partial<Record<Encoding, Buffer>>;
}

function latestBytes(key: string, answer: LatestAnswer): number {
  return ENTRY_OVERHEAD_BYTES + key.length * 2 + answer.body.length + (answer.encoded.gzip?.length ?? 0) + (answer.encoded.br?.length ?? 0);
}

/**
 * History answers (`GET /v1/rates/{key}/history`), rendered where they cost
 * the event loop least.
 *
 * Where the store can be read from another thread (the server), the candles
 * are read, rendered through a block cache, turned into body bytes,
 * compressed and given their ETag in a worker thread (render-threads.ts): the
 * event loop only hands the question over and writes the bytes it gets back.
 * A worker has its own block cache, a share of BLOCK_CACHE_BOUNDS, emptied
 * whenever the event loop's would be (the history revision moved, the
 * recorder changed); the recorder's newest candles go with each question.
 *
 * Ranges reaching the open candles (the latest 1,000 candles every chart asks
 * for) are kept here too, as bytes, while the recorder's version of the
 * reference stays the same: within a second (a body's `generated_at` is to
 * the second) every caller of such a range gets the same bytes, and a caller
 * holding its ETag gets a 304 without a worker being asked at all. A new value
 * recorded replaces the answer on the next request (the worker re-renders only
 * the block still open). Bounded in bytes and entries (LATEST_BOUNDS). Answers
 * asked for at the same moment are rendered once.
 *
 * Elsewhere (CLI commands, a reader without a store location) the answer is
 * rendered on this thread as before.
 */
export class HistoryAnswers {
  private readonly pool = historyRenderPool();
  private readonly latest: LRUCache<string, LatestAnswer>;
  private readonly pending = new Map<string, Promise<HistoryRendered>>();

  constructor(
    private readonly reader: HistoryReader,
    private readonly time: ZoneTime,
    bounds: LatestBounds = LATEST_BOUNDS,
  ) {
    this.latest = new LRUCache({ max: bounds.maxEntries, maxSize: bounds.maxBytes, sizeCalculation: (answer, key) => latestBytes(key, answer) });
  }

  /** Answers and bytes the latest-ranges cache holds now (for tests and metrics). */
  get held(): { answers: number; bytes: number } {
    return { answers: this.latest.size, bytes: this.latest.calculatedSize };
  }

  /** The worker threads running now, and how many answers they are rendering (tests stop one to see the pool recover). */
  get workers(): { threads: readonly { terminate(): Promise<number> }[]; rendering: number } {
    return { threads: this.pool.threads, rendering: this.pool.running };
  }

  async answer(question: HistoryQuestion): Promise<HistoryAnswer> {
    const { reference, interval, from, to, toman, now } = question;
    const generatedAt = this.time.format(now);
    const location = this.reader.location;
    if (location === null) {
      const candles = from < to ? await this.reader.rendered(reference.key, interval, from, to, now, toman) : { json: '', count: 0, hash: 0 };
      return { ...renderHistory({ reference, interval, from, to, toman }, candles, this.time, generatedAt), encoded: null };
    }
    const freshness = await this.reader.freshness(reference.key, now);
    const key = `${reference.key} ${interval} ${from} ${to}${toman ? ' toman' : ''}`;
    const validity = `${freshness.generation} ${freshness.liveVersion}`;
    // Kept: ranges reaching the open candles, where the recorder's version says when they change.
    const keep = to > now - SETTLED_MS && freshness.liveVersion !== null;
    const held = keep ? this.latest.get(key) : undefined;
    if (held !== undefined && held.validity === validity) {
      // The body only says how large the answer is: a caller holding the ETag gets a 304.
      if (question.holds(held.etag)) return answerOf(held.etag, held.body, held.compressible, null);
      if (held.generatedAt === generatedAt) {
        const encoding = held.compressible ? question.encoding : null;
        const form = encoding === null ? undefined : held.encoded[encoding];
        if (encoding === null || form !== undefined) return answerOf(held.etag, held.body, held.compressible, form === undefined ? null : { encoding: encoding!, body: form });
      }
    }
    const rendered = await this.rendered(key, validity, question, generatedAt, freshness.generation, freshness.liveVersion, freshness.recent(GRAIN_OF[interval]));
    const body = bytesOf(rendered.body);
    const encoded = rendered.encoded === null ? null : { encoding: question.encoding!, body: bytesOf(rendered.encoded) };
    if (keep) this.keep(key, validity, generatedAt, rendered.etag, body, rendered.compressible, encoded);
    return answerOf(rendered.etag, body, rendered.compressible, encoded);
  }

  /** Ends the render threads (the app's close), their PostgreSQL connections closed first. */
  async close(): Promise<void> {
    await closeRenderThreads(this.pool);
  }

  /** The answer from a worker; the same question asked meanwhile waits for the same answer. */
  private rendered(key: string, validity: string, question: HistoryQuestion, generatedAt: string, generation: number, liveVersion: number | null, recent: Candle[]): Promise<HistoryRendered> {
    const id = `${key}\n${validity}\n${generatedAt}\n${question.encoding}`;
    let answer = this.pending.get(id);
    if (answer === undefined) {
      const { reference, interval, from, to, toman } = question;
      answer = this.pool
        .run({
          location: this.reader.location!,
          timeZone: this.time.timeZone,
          head: { reference: { key: reference.key, title: reference.title, unit: reference.unit, currency: reference.currency, per: reference.per }, interval, from, to, toman },
          now: question.now,
          generatedAt,
          encoding: question.encoding,
          generation,
          liveVersion,
          recent,
          bounds: WORKER_BLOCK_BOUNDS,
        })
        .then(
          (result) => {
            if (isCarriedStoreError(result)) {
              this.reader.storeFailed(storeErrorOf(result));
              throw unavailable();
            }
            return result as HistoryRendered;
          },
          (error: unknown) => {
            throw error instanceof WorkerFailedError ? workerFailed() : error;
          },
        )
        .finally(() => this.pending.delete(id));
      this.pending.set(id, answer);
    }
    return answer;
  }

  private keep(key: string, validity: string, generatedAt: string, etag: string, body: Buffer, compressible: boolean, encoded: HistoryAnswer['encoded']): void {
    const held = this.latest.peek(key);
    // The same answer of the same second in another coding: one entry holds both forms.
    const forms = held !== undefined && held.validity === validity && held.generatedAt === generatedAt ? { ...held.encoded } : {};
    if (encoded !== null) forms[encoded.encoding] = encoded.body;
    this.latest.set(key, { validity, generatedAt, etag, body, compressible, encoded: forms });
  }
}



/** Each worker's share of the block cache's bounds, so that all of them together stay within them. */
const WORKER_BLOCK_BOUNDS = {
  maxBytes: Math.floor(BLOCK_CACHE_BOUNDS.maxBytes / RENDER_THREADS),
  maxBlocks: Math.floor(BLOCK_CACHE_BOUNDS.maxBlocks / RENDER_THREADS),
};

function answerOf(etag: string, body: Buffer, compressible: boolean, encoded: HistoryAnswer['encoded']): HistoryAnswer {
  return { etag, body, compressible, encoded };
}

/** Bytes moved from a worker, as a Buffer over the same memory (no copy). */
function bytesOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
