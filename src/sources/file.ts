import { constants, watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { systemClock, type Clock } from '../domain/clock.js';
import { NERKH_FORMAT, type FormatSpec } from './formats/index.js';
import { SourceFormatError, type SourceData } from './parse.js';
import { ownParseThreads, parseRules, type DocumentParseThreads, type ParseRules } from './parse-threads.js';
import { DEFAULT_MAX_BYTES, DocumentTooLargeError, readBytes } from './read-document.js';
import { SourceReadError, type SourceReader } from './reader.js';

/** What a file source guards against; each has a default. */
export interface FileSourceLimits {
  /** The read (stat, open, read) at most this long, and the parse again at most this long; default 5 s. */
  timeoutMs?: number;
  /** File size at most; default 16 MiB. */
  maxBytes?: number;
  /** How far ahead of the receive time a timestamp is clamped rather than refused (ms). */
  clockSkewMs?: number;
  /** The only item keys kept (the catalogue's source keys); others are counted, not stored. */
  wanted?: ReadonlySet<string> | null;
  /** The document's shape; default nerkh. */
  format?: FormatSpec;
  /** The threads its documents are parsed in; default: one of its own. */
  parsing?: DocumentParseThreads;
}

const READ_CHUNK_BYTES = 64 * 1024;
// O_NONBLOCK: opening a FIFO swapped in after the check must not wait for a writer (absent on Windows).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * A source document on disk, in the source's format. It is re-read only
 * when its modification time or size changes (the cache key), found by
 * watching its folder, with a stat poll as a fallback for filesystems where
 * watching is unreliable.
 *
 * Only a regular file is read (checked before opening, and again on the open
 * file), at most `maxBytes` of it, and the read has a deadline: a FIFO,
 * a device or a hung mount fails the poll with a reason instead of holding
 * the source (and a thread of the I/O pool) for good. A read still stuck
 * past its deadline is not started again until it ends, so a hung mount
 * takes at most one I/O thread per source. The bytes are then parsed in a
 * thread, with the same deadline again (see DocumentParseThreads).
 */
export class FileSourceReader implements SourceReader {
  private signature: string | null = null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** A read that passed its deadline and has not ended yet. */
  private stuck: Promise<unknown> | null = null;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly parsing: DocumentParseThreads;
  private readonly rules: ParseRules;

  constructor(
    private readonly path: string,
    private readonly pollSeconds: number,
    private readonly clock: Clock = systemClock,
    private readonly limits: FileSourceLimits = {},
  ) {
    this.timeoutMs = limits.timeoutMs ?? 5000;
    this.maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
    this.parsing = limits.parsing ?? ownParseThreads(this.maxBytes);
    this.rules = parseRules(limits.format ?? NERKH_FORMAT, limits.wanted ?? null, this.timeoutMs);
  }

  async readIfChanged(): Promise<SourceData | null> {
    if (this.stuck) throw new SourceReadError(`file read stuck for more than ${this.timeoutMs / 1000} s, waiting for it to end (a hung mount?)`);
    const attempt = this.read();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new SourceReadError(`file read timed out after ${this.timeoutMs / 1000} s`));
      }, this.timeoutMs);
    });
    let read;
    try {
      read = await Promise.race([attempt, deadline]);
    } catch (error) {
      if (timedOut) {
        // Whatever the late read brings is dropped, and the file is read afresh once it ends.
        const stuck = attempt
          .catch(() => {})
          .finally(() => {
            if (this.stuck === stuck) this.stuck = null;
            this.signature = null;
          });
        this.stuck = stuck;
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (read === null) return null;
    try {
      const data = await this.parsing.parse(read.bytes, this.rules, { fallbackTime: read.mtimeMs, now: this.clock.now(), skewMs: this.limits.clockSkewMs });
      this.signature = read.signature;
      return data;
    } catch (error) {
      // A corrupt file, or one that cannot be parsed in time or memory, is not parsed again until it changes.
      this.signature = error instanceof SourceFormatError ? read.signature : null;
      throw error;
    }
  }

  /** One read: null when unchanged since the last good read; the bytes with their cache key and modification time otherwise. */
  private async read(): Promise<{ signature: string; bytes: Uint8Array; mtimeMs: number } | null> {
    let reading: string | null = null;
    try {
      const info = await stat(this.path, { bigint: true });
      this.checkKind(info);
      if (signatureOf(info) === this.signature) return null;
      const handle = await open(this.path, OPEN_FLAGS);
      try {
        // The path may have been swapped between the stat and the open: what counts is the file opened.
        const opened = await handle.stat({ bigint: true });
        this.checkKind(opened);
        reading = signatureOf(opened);
        const bytes = await readBytes(chunksOf(handle), this.maxBytes, 'file');
        return { signature: reading, bytes, mtimeMs: Number(opened.mtimeMs) };
      } finally {
        await handle.close();
      }
    } catch (error) {
      // An oversized file is not read again until it changes, while any other
      // failure (missing, unreadable, not a regular file, timed out) is retried at every poll.
      this.signature = reading !== null && error instanceof SourceFormatError ? reading : null;
      throw error;
    }
  }

  private checkKind(info: { isFile(): boolean; isDirectory(): boolean; size: bigint }): void {
    if (info.isDirectory()) throw new SourceReadError('path is a directory');
    if (!info.isFile()) throw new SourceReadError('not a regular file (a FIFO, socket or device is never read)');
    if (info.size > BigInt(this.maxBytes)) throw new DocumentTooLargeError(this.maxBytes, 'file');
  }

  start(onHint: () => void): void {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) onHint();
      });
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      // The folder may not exist yet; the poll below still finds the file when it appears.
      this.watcher = null;
    }
    this.timer = setInterval(onHint, this.pollSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** The cache key: a file is re-read when any of these changes. */
function signatureOf(info: { mtimeNs: bigint; size: bigint; ino: bigint }): string {
  return `${info.mtimeNs}:${info.size}:${info.ino}`;
}

/** The file's bytes in chunks, from where the handle stands, each in a buffer of its own (they are kept until the last is read). */
async function* chunksOf(handle: FileHandle): AsyncGenerator<Uint8Array> {
  for (;;) {
    const buffer = Buffer.allocUnsafeSlow(READ_CHUNK_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
  }
}
