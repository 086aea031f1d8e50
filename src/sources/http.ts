import { systemClock, type Clock } from '../domain/clock.js';
import { parseSourceDocument, SourceFormatError, type SourceData } from './parse.js';
import type { SourceReader } from './reader.js';

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * A JSON document over HTTP, polled with a timeout and conditional requests
 * (`If-None-Match` / `If-Modified-Since`). Back-off after failures is the
 * monitor's schedule (see `nextDelayMs`), so this class stays fetch-and-parse.
 */
export class HttpSourceReader implements SourceReader {
  private etag: string | null = null;
  private lastModified: string | null = null;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  async readIfChanged(): Promise<SourceData | null> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.etag) headers['if-none-match'] = this.etag;
    if (this.lastModified) headers['if-modified-since'] = this.lastModified;
    const response = await fetch(this.url, { headers, signal: AbortSignal.timeout(this.timeoutMs), redirect: 'follow' });
    if (response.status === 304) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new SourceFormatError(`HTTP ${response.status}`);
    }
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_BODY_BYTES) {
      await response.body?.cancel();
      throw new SourceFormatError('response too large');
    }
    const text = await response.text();
    const lastModified = response.headers.get('last-modified');
    const now = this.clock.now();
    const fallback = lastModified ? Date.parse(lastModified) : now;
    const data = parseSourceDocument(text, Number.isFinite(fallback) ? fallback : now, now);
    // Only a good document becomes the base of the next conditional request.
    this.etag = response.headers.get('etag');
    this.lastModified = lastModified;
    return data;
  }

  // Polling is driven by the monitor, which owns the back-off schedule.
  start(): void {}
  stop(): void {}
}

/** The default longest wait between polls of a failing source: a recovered source is used again within this. */
export const DEFAULT_MAX_BACKOFF_SECONDS = 30;

/**
 * Poll delay: the configured interval, doubled per consecutive failure, capped at
 * `maxBackoffSeconds` (default: the larger of the interval and 30 s), so a source that
 * comes back is probed, and used, again within that cap. Never faster than the interval.
 */
export function nextDelayMs(pollSeconds: number, consecutiveFailures: number, maxBackoffSeconds = Math.max(pollSeconds, DEFAULT_MAX_BACKOFF_SECONDS)): number {
  const base = pollSeconds * 1000;
  if (consecutiveFailures <= 0) return base;
  return Math.min(base * 2 ** Math.min(consecutiveFailures, 30), Math.max(base, maxBackoffSeconds * 1000));
}
