import type { SourceData } from './parse.js';

/**
 * An adapter fetches and parses one source, nothing else: it throws on any
 * failure and leaves health and last-good-data bookkeeping to the monitor.
 */
export interface SourceReader {
  /** The new data, or null when the source has not changed since the last read. */
  readIfChanged(): Promise<SourceData | null>;
  /** Start change notifications (a watch, a timer); `onHint` asks the monitor to read now. */
  start(onHint: () => void): void;
  stop(): void;
}

/**
 * A failed read whose message was written for the public status page (it
 * names no host and no path) and is shown as it is.
 */
export class SourceReadError extends Error {}

/** An error message fit for the public status page: no paths, no stack. */
export function describeReadError(error: unknown): string {
  if (error instanceof SourceReadError) return error.message;
  const err = error as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
      return 'file not found';
    case 'EACCES':
    case 'EPERM':
      return 'file not readable';
    case 'EISDIR':
      return 'path is a directory';
    default:
      break;
  }
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'request timed out';
  const message = typeof err?.message === 'string' ? err.message : 'read failed';
  // Keep messages short and free of filesystem paths.
  return message.replace(/\/[^\s'"]+/g, '<path>').slice(0, 200);
}
