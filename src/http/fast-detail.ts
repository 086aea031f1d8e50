import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { errorAnswer, writeAnswer } from './answer.js';
import { answerDetail, DETAIL_PREFIX, readDetailRequest, type DetailAnswer, type DetailRequest } from './answer-detail.js';
import { MISSING_HOST, requestIdFor } from './context.js';
import type { AppDeps } from './deps.js';

const ROUTE = '/v1/rates/:keys';

/**
 * `GET /v1/rates/{keys}` straight on node:http: the endpoint rate boards poll
 * all day, answered by `answerDetail` like the Fastify route, minus the
 * framework's per-request machinery. Anything outside the plain case
 * (another method, a query string, percent-encoding, a server shutting down
 * or shedding load) returns false and goes to Fastify, which answers it the
 * same way (a parity test holds the two together).
 */
export function createDetailFastPath(deps: AppDeps, state: FastPathState): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const url = request.url!;
    if (request.method !== 'GET' || !url.startsWith(DETAIL_PREFIX) || state.closing || state.underPressure) return false;
    for (let i = DETAIL_PREFIX.length; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x3f /* ? */ || c === 0x25 /* % */ || c === 0x2f /* / */ || c === 0x23 /* # */) return false;
    }
    serveDetail(deps, state, request, response, url);
    return true;
  };
}

/** Owned by the app: while closing or under pressure every request goes to Fastify (which answers 503). */
export interface FastPathState {
  closing: boolean;
  /** The load-shedding verdict, refreshed with each pressure sample: one boolean read per request. */
  underPressure: boolean;
  /** The app's logger (Fastify routes log through the request's own). */
  log: Logger | null;
  /** Whether the logger writes one line per request (level info or below): decided once, not per request. */
  logRequests: boolean;
}

interface Logger {
  info(details: object, message: string): void;
}

function serveDetail(deps: AppDeps, state: FastPathState, request: IncomingMessage, response: ServerResponse, url: string): void {
  const started = performance.now();
  const now = deps.time.now();
  // A URL with a query string never comes this way.
  const input = readDetailRequest(request.rawHeaders, url, null, request.socket.remoteAddress ?? '', now);
  input.requestId = requestIdFor(input.requestId);
  // An HTTP/1.1 request without Host is refused before anything else (RFC 9112 §3.2), as Fastify's routes do.
  const answer =
    input.hasHost || request.httpVersionMinor === 0 ? answerDetail(deps, input) : { ...errorAnswer(MISSING_HOST, input.requestId, deps.time.format(now)), access: null, failure: null };
  if (!input.hasBody) skipDrain(request);
  if (answer instanceof Promise) finishLater(deps, state, response, input, answer, started);
  else finish(deps, state, response, input, answer, started);
}

/** The rare answer that waited for the shared limiter: written when it comes (it never rejects). */
function finishLater(deps: AppDeps, state: FastPathState, response: ServerResponse, input: DetailRequest, answer: Promise<DetailAnswer>, started: number): void {
  void answer.then((settled) => finish(deps, state, response, input, settled, started));
}

function finish(deps: AppDeps, state: FastPathState, response: ServerResponse, input: DetailRequest, answer: DetailAnswer, started: number): void {
  writeAnswer(response, answer);
  const access = answer.access;
  if (access) deps.meter.record(access.account.id, access.id, 'detail', input.now, answer.failure);
  const ms = performance.now() - started;
  deps.metrics.observe(ROUTE, 'GET', answer.status, ms / 1000);
  // The same one line per request as the Fastify routes write (not even built below level info).
  if (state.logRequests) state.log?.info({ reqId: input.requestId, method: 'GET', url: input.path, status: answer.status, ms: Math.round(ms * 100) / 100 }, 'request');
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
