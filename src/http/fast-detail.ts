import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { admit } from '../access/admission.js';
import type { KeyAccess } from '../access/directory.js';
import { appendRateLimitHeaders } from '../access/limiter/limiter.js';
import { matchesEtag, secondsToBoundary } from './conditional.js';
import { EXPOSED_HEADERS, requestIdFor } from './context.js';
import type { AppDeps } from './deps.js';
import { ApiError, errorBody } from '../domain/errors.js';

const PREFIX = '/v1/rates/';
const ROUTE = '/v1/rates/:keys';
const JSON_TYPE = 'application/json; charset=utf-8';
const cacheControls: string[] = [];

/**
 * `GET /v1/rates/{keys}` straight on node:http: the endpoint rate boards poll
 * all day. It runs the same admission, rendering and metering functions as
 * the Fastify route, minus the framework's per-request machinery. Anything
 * outside the plain case (another method, a query string, percent-encoding,
 * a server shutting down) returns false and goes to Fastify, which answers
 * it the same way (a parity test holds the two together).
 */
export function createDetailFastPath(deps: AppDeps, state: FastPathState): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const url = request.url!;
    if (request.method !== 'GET' || !url.startsWith(PREFIX) || url.length === PREFIX.length || state.closing) return false;
    for (let i = PREFIX.length; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x3f /* ? */ || c === 0x25 /* % */ || c === 0x2f /* / */) return false;
    }
    serveDetail(deps, state, request, response, url);
    return true;
  };
}

/** Owned by the app: a closing server leaves every request to Fastify (which answers 503). */
export interface FastPathState {
  closing: boolean;
  /** The app's logger (Fastify routes log through the request's own). */
  log: Logger | null;
  /** Whether the logger writes one line per request (level info or below): decided once, not per request. */
  logRequests: boolean;
}

interface Logger {
  error(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** The four request headers the detail path reads, and whether a body follows. */
interface DetailHeaders {
  apiKey: string | undefined;
  requestId: string | undefined;
  origin: string | undefined;
  ifNoneMatch: string | undefined;
  hasBody: boolean;
}

/**
 * Read them straight from the raw header list (first occurrence, names in any
 * case) rather than have Node build the whole `request.headers` object.
 */
function readHeaders(raw: string[]): DetailHeaders {
  const found: DetailHeaders = { apiKey: undefined, requestId: undefined, origin: undefined, ifNoneMatch: undefined, hasBody: false };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    switch (name.length) {
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
        if (found.requestId === undefined && name.toLowerCase() === 'x-request-id') found.requestId = raw[i + 1];
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

function serveDetail(deps: AppDeps, state: FastPathState, request: IncomingMessage, response: ServerResponse, url: string): void {
  const log = state.log;
  const started = performance.now();
  const now = deps.time.now();
  const incoming = readHeaders(request.rawHeaders);
  const requestId = requestIdFor(incoming.requestId);
  const origin = incoming.origin;
  // A flat [name, value, …] list: no per-request object shapes to build.
  const headers: string[] = ['x-request-id', requestId];
  if (origin !== undefined) headers.push('access-control-allow-origin', origin, 'vary', 'Origin', 'access-control-expose-headers', EXPOSED_HEADERS);
  let access: KeyAccess | null = null;
  let status = 200;
  let failure: { status: number; error: string; path: string } | null = null;
  try {
    admit(deps, 'detail', incoming.apiKey, origin, request.socket.remoteAddress ?? '', now, (admitted) => {
      access = admitted.access;
      appendRateLimitHeaders(headers, admitted.decision, admitted.access.account.limits);
    });
    const account = access!.account;
    const interval = account.plan.refresh_interval_seconds;
    const prepared = deps.detailRenderer.prepare(deps.snapshots.forInterval(interval, now), url.slice(PREFIX.length), account.allowance);
    headers.push('cache-control', cacheControl(secondsToBoundary(interval, now)), 'etag', prepared.etag);
    if (matchesEtag(incoming.ifNoneMatch, prepared.etag)) {
      status = 304;
      response.writeHead(304, headers);
      response.end();
    } else {
      const body = prepared.body.at(deps.time.format(now));
      headers.push('content-type', JSON_TYPE, 'content-length', String(body.length));
      response.writeHead(200, headers);
      response.end(body);
    }
  } catch (caught) {
    const error = caught instanceof ApiError ? caught : internalError(log, caught, requestId);
    for (const [name, value] of Object.entries(error.headers)) headers.push(name, value);
    const body = errorBody(error.code, error.message, deps.time.format(now), requestId);
    headers.push('cache-control', 'no-store', 'content-type', JSON_TYPE, 'content-length', String(Buffer.byteLength(body)));
    status = error.statusCode;
    failure = { status, error: error.code, path: url };
    response.writeHead(status, headers);
    response.end(body);
  }
  if (!incoming.hasBody) skipDrain(request);
  const known = access as KeyAccess | null;
  if (known) deps.meter.record(known.account.id, known.id, 'detail', now, failure);
  const ms = performance.now() - started;
  deps.metrics.observe(ROUTE, 'GET', status, ms / 1000);
  // The same one line per request as the Fastify routes write (not even built below level info).
  if (state.logRequests) log?.info({ reqId: requestId, method: 'GET', url, status, ms: Math.round(ms * 100) / 100 }, 'request');
}

/**
 * When a response finishes, Node drains a request nobody read by resuming its
 * stream, which ends and destroys it over several ticks: about a tenth of
 * this endpoint's cost. A GET without a body has nothing to drain, so mark it
 * drained. `_dumped` is the flag Node's own drain sets (body bytes arriving
 * for a drained request are dropped, never buffered); were it ever renamed,
 * this would only cost the saving, not correctness.
 */
function skipDrain(request: IncomingMessage): void {
  (request as IncomingMessage & { _dumped: boolean })._dumped = true;
}

function cacheControl(maxAge: number): string {
  return (cacheControls[maxAge] ??= `private, max-age=${maxAge}`);
}

function internalError(log: Logger | null, error: unknown, requestId: string): ApiError {
  log?.error({ err: error, reqId: requestId }, 'request failed');
  return new ApiError('INTERNAL_ERROR');
}
