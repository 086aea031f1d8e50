import { admit } from '../access/admission.js';
import type { KeyAccess } from '../access/directory.js';
import { ApiError, type ErrorCode } from '../domain/errors.js';
import { appendError, JSON_TYPE, type Answer } from './answer.js';
import { matchesEtag, secondsToBoundary } from './conditional.js';
import { EXPOSED_HEADERS } from './context.js';
import type { AppDeps } from './deps.js';
import { unknownParameter } from './query.js';

export const DETAIL_PREFIX = '/v1/rates/';

/** What `GET /v1/rates/{keys}` reads of a request, taken straight from node's request by either path. */
export interface DetailRequest {
  /** The URL path as received, starting with /v1/rates/, still percent-encoded. */
  path: string;
  /** The raw query string after `?`, or null when the URL has none. */
  query: string | null;
  /** The id the answer carries (the reader leaves the incoming x-request-id here for the caller to vet). */
  requestId: string;
  apiKey: string | undefined;
  origin: string | undefined;
  ifNoneMatch: string | undefined;
  /** The client address, for the failed-key throttle. */
  address: string;
  now: number;
  /** Whether a body follows (the raw path skips the drain when none does). */
  hasBody: boolean;
  /** Whether a Host header came (HTTP/1.1 requires one). */
  hasHost: boolean;
}

export interface DetailFailure {
  status: number;
  error: ErrorCode;
  path: string;
}

/** The answer, plus what the caller meters: the key (when it was known) and the failure. */
export interface DetailAnswer extends Answer {
  access: KeyAccess | null;
  failure: DetailFailure | null;
}

export type DetailDeps = Pick<AppDeps, 'time' | 'directory' | 'limiter' | 'failedAttempts' | 'detailRenderer' | 'snapshots' | 'logger'>;

const cacheControls: string[] = [];

/**
 * `GET /v1/rates/{keys}`, framework-free: the raw node:http path and the
 * Fastify route (GET and HEAD) both call this and write only what it returns.
 * Checks run in the documented order: key, plan, origin and limit (admission),
 * then the query and the keys segment, then resolution. Never throws (nor
 * rejects): an unexpected failure is logged and answered as INTERNAL_ERROR.
 *
 * The answer comes at once, except when admission waits for the shared
 * limiter (rare, see access/admission.ts): then it is a promise.
 */
export function answerDetail(deps: DetailDeps, request: DetailRequest): DetailAnswer | Promise<DetailAnswer> {
  // The answer doubles as the admission record: admission fills in the key and the limit headers.
  const answer: DetailAnswer = { status: 200, headers: ['x-request-id', request.requestId], body: null, access: null, failure: null };
  if (request.origin !== undefined) answer.headers.push('access-control-allow-origin', request.origin, 'vary', 'Origin', 'access-control-expose-headers', EXPOSED_HEADERS);
  let admitted: KeyAccess | Promise<KeyAccess>;
  try {
    admitted = admit(deps, 'detail', request.apiKey, request.origin, request.address, request.now, answer);
  } catch (caught) {
    return fail(deps, request, answer, caught, -1);
  }
  if (admitted instanceof Promise) return answerLater(deps, request, answer, admitted);
  return respond(deps, request, answer, admitted);
}

/** The rare path, kept apart so that `answerDetail` itself creates no closure. */
function answerLater(deps: DetailDeps, request: DetailRequest, answer: DetailAnswer, admitted: Promise<KeyAccess>): Promise<DetailAnswer> {
  return admitted.then(
    (access) => respond(deps, request, answer, access),
    (caught: unknown) => fail(deps, request, answer, caught, -1),
  );
}

/** Everything after admission: the query, the keys segment, the prepared body. */
function respond(deps: DetailDeps, request: DetailRequest, answer: DetailAnswer, access: KeyAccess): DetailAnswer {
  const now = request.now;
  const headers = answer.headers;
  const admittedHeaders = headers.length;
  try {
    if (request.query !== null) rejectQuery(request.query);
    const interval = access.account.plan.refresh_interval_seconds;
    const prepared = deps.detailRenderer.prepare(deps.snapshots.forInterval(interval, now), keysSegment(request.path), access.account.allowance);
    headers.push('cache-control', cacheControl(secondsToBoundary(interval, now)), 'etag', prepared.etag);
    if (matchesEtag(request.ifNoneMatch, prepared.etag)) {
      answer.status = 304;
    } else {
      const body = prepared.body.at(deps.time.format(now));
      headers.push('content-type', JSON_TYPE, 'content-length', String(body.length));
      answer.body = body;
    }
  } catch (caught) {
    // Headers of a success cut short go; the limit headers stay.
    return fail(deps, request, answer, caught, admittedHeaders);
  }
  return answer;
}

/** An error answer; `keepHeaders` (when ≥ 0) cuts the headers back to what admission left. */
function fail(deps: DetailDeps, request: DetailRequest, answer: DetailAnswer, caught: unknown, keepHeaders: number): DetailAnswer {
  const headers = answer.headers;
  if (keepHeaders >= 0) headers.length = keepHeaders;
  const error = caught instanceof ApiError ? caught : internalError(deps, caught, request.requestId);
  answer.status = error.statusCode;
  answer.body = appendError(headers, error, request.requestId, deps.time.format(request.now));
  answer.failure = { status: error.statusCode, error: error.code, path: request.query === null ? request.path : `${request.path}?${request.query}` };
  return answer;
}

/**
 * Fill in a DetailRequest from node's raw header list (first occurrence,
 * names in any case) rather than have Node build the whole `headers` object.
 */
export function readDetailRequest(raw: string[], path: string, query: string | null, address: string, now: number): DetailRequest {
  const found: DetailRequest = {
    path,
    query,
    requestId: '',
    apiKey: undefined,
    origin: undefined,
    ifNoneMatch: undefined,
    address,
    now,
    hasBody: false,
    hasHost: false,
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
    }
  }
  return found;
}

/** The keys segment, percent-decoded; a segment that cannot be decoded is INVALID_KEYS (after admission, like any other bad segment). */
function keysSegment(path: string): string {
  const segment = path.slice(DETAIL_PREFIX.length);
  if (segment.indexOf('%') === -1) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiError('INVALID_KEYS', 'The keys segment is not validly percent-encoded.');
  }
}

/** Detail takes only `at` (answered apart, see historical.ts): any other parameter is named in the error. */
function rejectQuery(query: string): void {
  for (const [name] of new URLSearchParams(query)) throw unknownParameter(name, ['at']);
}

function cacheControl(maxAge: number): string {
  return (cacheControls[maxAge] ??= `private, max-age=${maxAge}`);
}

function internalError(deps: DetailDeps, error: unknown, requestId: string): ApiError {
  deps.logger.error({ err: error, reqId: requestId }, 'request failed');
  return new ApiError('INTERNAL_ERROR');
}
