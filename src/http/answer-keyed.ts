import { admit } from '../access/admission.js';
import type { AccountAccess, KeyAccess } from '../access/directory.js';
import type { Service } from '../domain/plan.js';
import { ApiError, type ErrorCode } from '../domain/errors.js';
import type { StampedBody } from '../render/detail.js';
import { appendError, JSON_TYPE, type Answer } from './answer.js';
import { matchesEtag, secondsToBoundary } from './conditional.js';
import { EXPOSED_HEADERS } from './context.js';
import type { AppDeps } from './deps.js';
import { acceptedEncoding, encodedEtag } from './encoding.js';

/** What a keyed endpoint reads of a request, taken straight from node's request by either path (raw or Fastify). */
export interface KeyedRequest {
  /** The URL path as received, still percent-encoded. */
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
  /** Whether a body follows (the raw path skips the drain when none does). */
  hasBody: boolean;
  /** Whether a Host header came (HTTP/1.1 requires one). */
  hasHost: boolean;
}

export interface KeyedFailure {
  status: number;
  error: ErrorCode;
  path: string;
}

/** The answer, plus what the caller meters: the key (when it was known) and the failure. */
export interface KeyedAnswer extends Answer {
  access: KeyAccess | null;
  failure: KeyedFailure | null;
}

/** A body prepared ahead of time, as an endpoint hands it over once the request is admitted and read. */
export interface PreparedAnswer {
  body: StampedBody;
  etag: string;
  /** Follows the time in the body's head and changes only with it (the legacy feed's server_time). */
  stampExtra?: string;
}

export type KeyedDeps = Pick<AppDeps, 'time' | 'directory' | 'limiter' | 'failedAttempts' | 'logger'>;

const cacheControls: string[] = [];
/** Where the Vary value sits when CORS headers follow x-request-id: [x-request-id, id, access-control-allow-origin, origin, vary, <here>, …]. */
const CORS_VARY = 5;

/**
 * A keyed endpoint that answers with a prepared body, framework-free: the raw
 * node:http path and the Fastify route both call this and write only what it
 * returns. Checks run in the documented order: key, plan, origin and limit
 * (admission), then `prepare` (which reads the query and resolves, throwing
 * ApiError), then If-None-Match. A body over 1 KB goes out compressed when the
 * client asks (see StampedBody). Never throws (nor rejects): an unexpected
 * failure is logged and answered as INTERNAL_ERROR.
 *
 * The answer comes at once, except when admission waits for the shared
 * limiter (rare, see access/admission.ts): then it is a promise.
 */
export function answerKeyed(deps: KeyedDeps, service: Service, request: KeyedRequest, prepare: Prepare): KeyedAnswer | Promise<KeyedAnswer> {
  // The answer doubles as the admission record: admission fills in the key and the limit headers.
  const answer: KeyedAnswer = { status: 200, headers: ['x-request-id', request.requestId], body: null, access: null, failure: null };
  if (request.origin !== undefined) answer.headers.push('access-control-allow-origin', request.origin, 'vary', 'Origin', 'access-control-expose-headers', EXPOSED_HEADERS);
  let admitted: KeyAccess | Promise<KeyAccess>;
  try {
    admitted = admit(deps, service, request.apiKey, request.origin, request.address, request.now, answer);
  } catch (caught) {
    return fail(deps, request, answer, caught, -1);
  }
  if (admitted instanceof Promise) return answerLater(deps, request, answer, admitted, prepare);
  return respond(deps, request, answer, admitted.account, prepare);
}

type Prepare = (account: AccountAccess) => PreparedAnswer;

/** The rare path, kept apart so that `answerKeyed` itself creates no closure. */
function answerLater(deps: KeyedDeps, request: KeyedRequest, answer: KeyedAnswer, admitted: Promise<KeyAccess>, prepare: Prepare): Promise<KeyedAnswer> {
  return admitted.then(
    (access) => respond(deps, request, answer, access.account, prepare),
    (caught: unknown) => fail(deps, request, answer, caught, -1),
  );
}

/** Everything after admission: the query and the prepared body, compressed when asked. */
function respond(deps: KeyedDeps, request: KeyedRequest, answer: KeyedAnswer, account: AccountAccess, prepare: Prepare): KeyedAnswer {
  const now = request.now;
  const headers = answer.headers;
  const admittedHeaders = headers.length;
  try {
    const prepared = prepare(account);
    const stamped = prepared.body;
    // Only a body worth compressing varies with Accept-Encoding.
    const encoding = stamped.compressible ? acceptedEncoding(request.acceptEncoding) : null;
    if (stamped.compressible) {
      if (request.origin !== undefined) headers[CORS_VARY] = 'Origin, Accept-Encoding';
      else headers.push('vary', 'Accept-Encoding');
    }
    const interval = account.plan.refresh_interval_seconds;
    headers.push('cache-control', cacheControl(secondsToBoundary(interval, now)), 'etag', encoding === null ? prepared.etag : encodedEtag(prepared.etag));
    if (matchesEtag(request.ifNoneMatch, prepared.etag)) {
      answer.status = 304;
    } else {
      let body = stamped.at(deps.time.format(now), prepared.stampExtra);
      if (encoding !== null) {
        body = stamped.encoded(encoding)!;
        headers.push('content-encoding', encoding);
      }
      headers.push('content-type', JSON_TYPE, 'content-length', String(body.length));
      answer.body = body;
    }
  } catch (caught) {
    return fail(deps, request, answer, caught, admittedHeaders);
  }
  return answer;
}

/**
 * An error answer; `keepHeaders` (when ≥ 0) cuts the headers back to what
 * admission left: headers of a success cut short go, the limit headers stay,
 * and Vary says Origin only.
 */
function fail(deps: KeyedDeps, request: KeyedRequest, answer: KeyedAnswer, caught: unknown, keepHeaders: number): KeyedAnswer {
  const headers = answer.headers;
  if (keepHeaders >= 0) headers.length = keepHeaders;
  if (request.origin !== undefined) headers[CORS_VARY] = 'Origin';
  const error = caught instanceof ApiError ? caught : internalError(deps, caught, request.requestId);
  answer.status = error.statusCode;
  answer.body = appendError(headers, error, request.requestId, deps.time.format(request.now));
  answer.failure = { status: error.statusCode, error: error.code, path: request.query === null ? request.path : `${request.path}?${request.query}` };
  return answer;
}

/**
 * Fill in a KeyedRequest from node's raw header list (first occurrence,
 * names in any case) rather than have Node build the whole `headers` object.
 */
export function readKeyedRequest(raw: string[], path: string, query: string | null, address: string, now: number): KeyedRequest {
  const found: KeyedRequest = {
    path,
    query,
    requestId: '',
    apiKey: undefined,
    origin: undefined,
    ifNoneMatch: undefined,
    acceptEncoding: undefined,
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
      case 15:
        if (found.acceptEncoding === undefined && name.toLowerCase() === 'accept-encoding') found.acceptEncoding = raw[i + 1];
        break;
    }
  }
  return found;
}

function cacheControl(maxAge: number): string {
  return (cacheControls[maxAge] ??= `private, max-age=${maxAge}`);
}

function internalError(deps: KeyedDeps, error: unknown, requestId: string): ApiError {
  deps.logger.error({ err: error, reqId: requestId }, 'request failed');
  return new ApiError('INTERNAL_ERROR');
}
