import { systemClock, type Clock } from '../domain/clock.js';
import { addressRefusal } from './address-rule.js';
import { DEFAULT_MAX_BACKOFF_SECONDS } from './defaults.js';
import { describeFetchFailure } from './fetch-failure.js';
import { acceptFor, NERKH_FORMAT, type FormatSpec } from './formats/index.js';
import { SourceFormatError, type SourceData } from './parse.js';
import { ownParseThreads, parseRules, type DocumentParseThreads, type ParseRules } from './parse-threads.js';
import { DEFAULT_MAX_BYTES, DocumentTooLargeError, readBytes } from './read-document.js';
import { SourceReadError, type SourceReader } from './reader.js';

/** Redirects followed at most, when following is allowed. */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** What an http source trusts of its upstream; each defaults to the safe choice. */
export interface HttpSourceLimits {
  /** Decoded body size at most (after any Content-Encoding); default 16 MiB. */
  maxBytes?: number;
  /** Follow 3xx redirects (each hop held to the same address rule); default false: refused. */
  followRedirects?: boolean;
  /** Allow plain http:// to a host that is not loopback; default false. */
  allowInsecure?: boolean;
  /** How far ahead of the receive time a timestamp is clamped rather than refused (ms). */
  clockSkewMs?: number;
  /** The only item keys kept (the catalogue's source keys); others are counted, not stored. */
  wanted?: ReadonlySet<string> | null;
  /** The document's shape; default nerkh. */
  format?: FormatSpec;
  /** The threads its documents are parsed in; default: one of its own. */
  parsing?: DocumentParseThreads;
}

/**
 * A source document over HTTP, in the source's format, polled with a timeout
 * and conditional requests (`If-None-Match` / `If-Modified-Since`). Back-off
 * after failures is the monitor's schedule (see `nextDelayMs`), so this class
 * stays fetch-and-parse.
 *
 * The upstream is not trusted: the body is read as a stream, its decoded
 * bytes counted and the request cut off past `maxBytes` (so neither a
 * chunked stream without end nor a small gzip that inflates to gigabytes is
 * ever buffered); redirects are refused unless allowed; plain http:// only
 * to loopback unless allowed; the timeout covers the whole exchange, body
 * included; and the body is parsed in a thread, within the same timeout
 * again (see DocumentParseThreads). Every failure is thrown with a reason fit
 * for the status page.
 */
export class HttpSourceReader implements SourceReader {
  private etag: string | null = null;
  private lastModified: string | null = null;
  private readonly maxBytes: number;
  private readonly parsing: DocumentParseThreads;
  private readonly rules: ParseRules;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
    private readonly limits: HttpSourceLimits = {},
    private readonly clock: Clock = systemClock,
  ) {
    this.maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
    this.parsing = limits.parsing ?? ownParseThreads(this.maxBytes);
    this.rules = parseRules(limits.format ?? NERKH_FORMAT, limits.wanted ?? null, timeoutMs);
  }

  async readIfChanged(): Promise<SourceData | null> {
    const fetched = await this.fetchDocument();
    if (fetched === null) return null;
    const { bytes, receivedAt, lastModified, etag } = fetched;
    const fallback = lastModified ? Date.parse(lastModified) : receivedAt;
    const data = await this.parsing.parse(bytes, this.rules, { fallbackTime: Number.isFinite(fallback) ? fallback : receivedAt, now: receivedAt, skewMs: this.limits.clockSkewMs });
    // Only a good document becomes the base of the next conditional request.
    this.etag = etag;
    this.lastModified = lastModified;
    return data;
  }

  /** The document's bytes and validators, or null when unchanged (304); the timeout covers it all, body included. */
  private async fetchDocument(): Promise<{ bytes: Uint8Array; receivedAt: number; lastModified: string | null; etag: string | null } | null> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      const response = await this.request(controller.signal);
      if (response.status === 304) {
        await response.body?.cancel();
        return null;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new SourceReadError(`HTTP ${response.status}`);
      }
      // An announced length is only the encoded size; it settles the matter early when nothing is encoded.
      const length = Number(response.headers.get('content-length') ?? 0);
      if (!response.headers.has('content-encoding') && length > this.maxBytes) throw new DocumentTooLargeError(this.maxBytes, 'response');
      const bytes = await readBytes(response.body ?? emptyBody(), this.maxBytes, 'response');
      return { bytes, receivedAt: this.clock.now(), lastModified: response.headers.get('last-modified'), etag: response.headers.get('etag') };
    } catch (error) {
      if (timedOut) throw new SourceReadError(`request timed out after ${this.timeoutMs / 1000} s`);
      if (error instanceof SourceReadError || error instanceof SourceFormatError) throw error;
      throw new SourceReadError(describeFetchFailure(error));
    } finally {
      clearTimeout(timer);
      // Cuts off a body left unread (past max_bytes, or a bad document): the sender is stopped there.
      controller.abort();
    }
  }

  /** The response to the source's address, after the redirects allowed; every hop is held to the address rule. */
  private async request(signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: acceptFor(this.limits.format) };
    if (this.etag) headers['if-none-match'] = this.etag;
    if (this.lastModified) headers['if-modified-since'] = this.lastModified;
    let url = this.url;
    for (let hop = 0; ; hop++) {
      const refusal = addressRefusal(url, this.limits.allowInsecure ?? false);
      if (refusal) throw new SourceReadError(hop === 0 ? refusal : `redirect refused: ${refusal}`);
      const response = await fetch(url, { headers, signal, redirect: 'manual' });
      if (!REDIRECTS.has(response.status)) return response;
      await response.body?.cancel();
      if (!this.limits.followRedirects) throw new SourceReadError(`redirect refused (HTTP ${response.status}, "follow_redirects" is off)`);
      if (hop >= MAX_REDIRECTS) throw new SourceReadError(`too many redirects (more than ${MAX_REDIRECTS})`);
      const location = response.headers.get('location');
      if (!location) throw new SourceReadError(`HTTP ${response.status} without a Location`);
      try {
        url = new URL(location, url).href;
      } catch {
        throw new SourceReadError(`HTTP ${response.status} to an invalid Location`);
      }
    }
  }

  // Polling is driven by the monitor, which owns the back-off schedule.
  start(): void {}
  stop(): void {}
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

export { DEFAULT_MAX_BACKOFF_SECONDS };

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
