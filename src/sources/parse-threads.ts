import { MessageChannel } from 'node:worker_threads';
import { ThreadPool } from '../threads/pool.js';
import { DEFAULT_MAX_BYTES } from './read-document.js';
import type { FormatSpec } from './formats/index.js';
import { portableFormat, type PortableFormat } from './formats/portable.js';
import type { ParseJob, ParseOutcome } from './parse-worker.js';
import { SourceReadError } from './reader.js';
import { NoUsableValuesError, SourceFormatError, type SourceData, type TimeRules } from './source-data.js';

/** The worker module beside this one: compiled JavaScript, or TypeScript where the sources run as they are (tests). */
const WORKER_FILE = new URL(import.meta.url.endsWith('.ts') ? './parse-worker.ts' : './parse-worker.js', import.meta.url).href;

const MiB = 1024 * 1024;
/**
 * A parse thread's heap: this many MB per MiB of the largest document
 * allowed, and never less than HEAP_FLOOR_MB (a thread's own modules take
 * some 10 MB). The costliest 15.5 MiB document measured, `$..gbp` through
 * small objects with a number matched (the text, two trees of it and the
 * path's list of nodes), fits in 192 MB and not in 96.
 */
const HEAP_MB_PER_MIB = 12;
const HEAP_FLOOR_MB = 32;
/** Parse threads run at a lower priority: a long parse takes a core only when the event loop leaves it. */
const NICE_INCREMENT = 10;
/** A parse no thread has taken by then fails: threads cannot start (a start takes a second or two on a busy machine). */
const START_LIMIT_MS = 30_000;

/** The heap one parse may take, in MB, for documents of at most `maxBytes`. */
export function parseHeapMb(maxBytes: number): number {
  return Math.max(HEAP_FLOOR_MB, Math.ceil((maxBytes / MiB) * HEAP_MB_PER_MIB));
}

/** A document that could not be parsed within its time or memory: refused like a malformed one (a file is not parsed again until it changes). */
export class ParseStoppedError extends SourceFormatError {}

/** How one source's documents are read: the format, the keys kept, and how long a parse may take. */
export interface ParseRules {
  format: PortableFormat;
  wanted: ReadonlySet<string> | null;
  timeoutMs: number;
}

/** A source's parse rules, its format made portable once (a reader parses by the same rules at every read). */
export function parseRules(format: FormatSpec, wanted: ReadonlySet<string> | null, timeoutMs: number): ParseRules {
  return { format: portableFormat(format), wanted, timeoutMs };
}

/**
 * Source documents parsed in worker threads (piscina, started on the first
 * parse; idle threads end after a minute), so the event loop only hands over
 * bytes and takes back values, however large or hostile the document.
 *
 * Each parse has a deadline, the source's `timeout_seconds` counted from when
 * a thread takes it (a thread's own start is not the document's fault): past
 * it the thread is ended, which stops even a regular expression backtracking
 * in a JSONPath filter, and another is started for the next parse. Each
 * thread's heap is bounded (parseHeapMb); a parse past it ends its thread
 * too. Either way the document is refused with the reason, and the monitor
 * keeps the source's last good data.
 *
 * `threads` is the number of sources that share the pool, so no source's
 * parse waits for another's.
 */
export class DocumentParseThreads {
  private readonly pool: ThreadPool;
  readonly heapMb: number;

  constructor(options: { threads: number; maxBytes: number }) {
    this.heapMb = parseHeapMb(options.maxBytes);
    this.pool = new ThreadPool(WORKER_FILE, { maxThreads: Math.max(1, options.threads), resourceLimits: { maxOldGenerationSizeMb: this.heapMb }, niceIncrement: NICE_INCREMENT });
  }

  /** Parse `bytes` (moved to the thread: unusable here afterwards). Throws SourceFormatError (a refused document) or SourceReadError (the thread failed). */
  async parse(bytes: Uint8Array, rules: ParseRules, times: TimeRules): Promise<SourceData> {
    const stop = new AbortController();
    let stoppedWith: Error | null = null;
    const halt = (error: Error) => {
      stoppedWith = error;
      stop.abort();
    };
    let timer = setTimeout(() => halt(new SourceReadError(`no parse thread started within ${START_LIMIT_MS / 1000} s`)), START_LIMIT_MS);
    const started = new MessageChannel();
    started.port1.once('message', () => {
      clearTimeout(timer);
      timer = setTimeout(() => halt(new ParseStoppedError(`parse took longer than ${rules.timeoutMs / 1000} s (timeout_seconds)`)), rules.timeoutMs);
    });
    const job: ParseJob = { bytes, format: rules.format, wanted: rules.wanted, rules: times, started: started.port2 };
    let outcome: ParseOutcome;
    try {
      outcome = (await this.pool.run(job, { signal: stop.signal, transferList: [bytes.buffer as ArrayBuffer, started.port2] })) as ParseOutcome;
    } catch (error) {
      throw stoppedWith ?? this.failure(error);
    } finally {
      clearTimeout(timer);
      started.port1.close();
    }
    if ('data' in outcome) return outcome.data;
    const { message, noUsable } = outcome.refused;
    throw noUsable === null ? new SourceFormatError(message) : new NoUsableValuesError(noUsable.dropped, noUsable.ahead, noUsable.reasons);
  }

  /** Why a parse failed that was not stopped: out of memory, or its thread failed. */
  private failure(error: unknown): Error {
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    if (cause?.code === 'ERR_WORKER_OUT_OF_MEMORY') return new ParseStoppedError(`parse needed more than ${this.heapMb} MB of memory`);
    return new SourceReadError(`parse thread failed: ${typeof cause?.message === 'string' ? cause.message.slice(0, 120) : 'unknown error'}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** For a reader made on its own (a test, a bench): one thread of its own, sized for its documents. */
export function ownParseThreads(maxBytes = DEFAULT_MAX_BYTES): DocumentParseThreads {
  return new DocumentParseThreads({ threads: 1, maxBytes });
}
