import type { KeyAccess } from '../../access/directory.js';
import type { ErrorCode } from '../../domain/errors.js';
import type { Answer } from '../answer.js';

/** What the usage error log keeps of a refused request. */
export interface KeyedFailure {
  status: number;
  error: ErrorCode;
  path: string;
}

/**
 * One keyed request and its answer, as the pipeline carries it from admission
 * to the log line: what was read of node's request (by either path, raw or
 * Fastify), what admission learned (the key, the limit headers) and the answer
 * being built. One object per request, so the hot path allocates no other.
 */
export interface Exchange extends Answer {
  method: string;
  /** The URL as received, still percent-encoded (the usage error log and the log line show it, keys redacted). */
  url: string;
  /** The path part of `url`. */
  path: string;
  /** The raw query string after `?`, or null when the URL has none. */
  query: string | null;
  /** The id the answer carries (the reader leaves the incoming x-request-id here for the caller to vet). */
  requestId: string;
  apiKey: string | undefined;
  origin: string | undefined;
  ifNoneMatch: string | undefined;
  acceptEncoding: string | undefined;
  /** The client address, for the failed-key throttle. */
  address: string;
  now: number;
  /** `performance.now()` when the request came in, for its duration. */
  started: number;
  /** Whether a body follows (the raw path skips the drain when none does). */
  hasBody: boolean;
  /** Whether a Host header came (HTTP/1.1 requires one). */
  hasHost: boolean;
  /** The identified key, once admission knows it: the request is then metered against it, whatever follows. */
  access: KeyAccess | null;
  failure: KeyedFailure | null;
}

/**
 * Read a request from node's raw header list (first occurrence, names in any
 * case) rather than have Node build the whole `headers` object. `queryAt` is
 * where the `?` is in `url`, or -1.
 */
export function readExchange(raw: string[], method: string, url: string, queryAt: number, address: string, now: number, started: number): Exchange {
  const found: Exchange = {
    method,
    url,
    path: queryAt === -1 ? url : url.slice(0, queryAt),
    query: queryAt === -1 ? null : url.slice(queryAt + 1),
    requestId: '',
    apiKey: undefined,
    origin: undefined,
    ifNoneMatch: undefined,
    acceptEncoding: undefined,
    address,
    now,
    started,
    hasBody: false,
    hasHost: false,
    access: null,
    failure: null,
    status: 200,
    headers: EMPTY,
    body: null,
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    switch (name.length) {
      case 4:
        if (name === 'Host' || name === 'host' || name.toLowerCase() === 'host') found.hasHost = true;
        break;
      case 9:
        if (found.apiKey === undefined && name.toLowerCase() === 'x-api-key') found.apiKey = raw[i + 1];
        break;
      case 14:
        if (name.toLowerCase() === 'content-length' && raw[i + 1]!.trim() !== '0') found.hasBody = true;
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') found.hasBody = true;
        break;
      case 12:
        if (found.requestId === '' && name.toLowerCase() === 'x-request-id') found.requestId = raw[i + 1]!;
        break;
      case 6:
        if (found.origin === undefined && name.toLowerCase() === 'origin') found.origin = raw[i + 1];
        break;
      case 13:
        if (found.ifNoneMatch === undefined && name.toLowerCase() === 'if-none-match') found.ifNoneMatch = raw[i + 1];
        break;
      case 15:
        if (found.acceptEncoding === undefined && name.toLowerCase() === 'accept-encoding') found.acceptEncoding = raw[i + 1];
        break;
    }
  }
  return found;
}

/** Replaced by the pipeline's own list before anything is added (see keyed.ts). */
const EMPTY = Object.freeze([]) as unknown as string[];
