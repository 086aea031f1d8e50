import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Service } from '../domain/plan.js';
import { errorAnswer, writeAnswer } from './answer.js';
import { answerCatalogue, CATALOGUE_PATH } from './answer-catalogue.js';
import { answerDetail, DETAIL_PREFIX } from './answer-detail.js';
import { readKeyedRequest, type KeyedAnswer, type KeyedRequest } from './answer-keyed.js';
import { MISSING_HOST, requestIdFor } from './context.js';
import type { AppDeps } from './deps.js';

/** An endpoint the raw path answers: its route name (for metrics), service (for metering) and answer. */
interface RawEndpoint {
  route: string;
  service: Service;
  answer(deps: AppDeps, request: KeyedRequest): KeyedAnswer | Promise<KeyedAnswer>;
}

const DETAIL: RawEndpoint = { route: '/v1/rates/:keys', service: 'detail', answer: answerDetail };
const CATALOGUE: RawEndpoint = { route: CATALOGUE_PATH, service: 'catalogue', answer: answerCatalogue };

/**
 * `GET /v1/rates/{keys}` and `GET /v1/rates` straight on node:http: the
 * endpoints boards and apps poll all day, answered by the same framework-free
 * functions as the Fastify routes, minus the framework's per-request
 * machinery. Anything outside the plain case (another method, percent-encoding
 * in the path, a server shutting down or shedding load) returns false and goes
 * to Fastify, which answers it the same way (a parity test holds the two
 * together). The query string is read by the answer function on either path.
 */
export function createDetailFastPath(deps: AppDeps, state: FastPathState): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const url = request.url!;
    if (request.method !== 'GET' || !url.startsWith(CATALOGUE_PATH) || state.closing || state.underPressure) return false;
    let endpoint: RawEndpoint;
    let query: number;
    if (url.length === CATALOGUE_PATH.length) {
      endpoint = CATALOGUE;
      query = -1;
    } else if (url.charCodeAt(CATALOGUE_PATH.length) === 0x3f /* ? */) {
      endpoint = CATALOGUE;
      query = CATALOGUE_PATH.length;
    } else if (url.startsWith(DETAIL_PREFIX)) {
      endpoint = DETAIL;
      const at = plainKeysEnd(url);
      if (at === null) return false;
      query = at === url.length ? -1 : at;
      // `?at=` reads the history store: the Fastify route answers it (historical.ts).
      if (query !== -1 && new URLSearchParams(url.slice(query + 1)).has('at')) return false;
    } else return false;
    if (query !== -1 && url.indexOf('#', query) !== -1) return false;
    serve(deps, state, endpoint, request, response, url, query);
    return true;
  };
}

/**
 * Where a plain keys segment ends (its `?`, or the URL's end); null when it
 * holds `%`, `/` or `#` (Fastify's route answers those). Native `indexOf`
 * scans are about eight times cheaper than a character loop over a
 * ten-key segment.
 */
function plainKeysEnd(url: string): number | null {
  const from = DETAIL_PREFIX.length;
  const question = url.indexOf('?', from);
  const end = question === -1 ? url.length : question;
  if (holds(url, '%', from, end) || holds(url, '/', from, end) || holds(url, '#', from, end)) return null;
  return end;
}

function holds(url: string, char: string, from: number, end: number): boolean {
  const at = url.indexOf(char, from);
  return at !== -1 && at < end;
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

/** `query`: where the `?` is in the URL, or -1. */
function serve(deps: AppDeps, state: FastPathState, endpoint: RawEndpoint, request: IncomingMessage, response: ServerResponse, url: string, query: number): void {
  const started = performance.now();
  const now = deps.time.now();
  const path = query === -1 ? url : url.slice(0, query);
  const input = readKeyedRequest(request.rawHeaders, path, query === -1 ? null : url.slice(query + 1), request.socket.remoteAddress ?? '', now);
  input.requestId = requestIdFor(input.requestId);
  // An HTTP/1.1 request without Host is refused before anything else (RFC 9112 §3.2), as Fastify's routes do.
  const answer =
    input.hasHost || request.httpVersionMinor === 0 ? endpoint.answer(deps, input) : { ...errorAnswer(MISSING_HOST, input.requestId, deps.time.format(now)), access: null, failure: null };
  if (!input.hasBody) skipDrain(request);
  if (answer instanceof Promise) finishLater(deps, state, endpoint, response, input, answer, started);
  else finish(deps, state, endpoint, response, input, answer, started);
}

/** The rare answer that waited for the shared limiter: written when it comes (it never rejects). */
function finishLater(deps: AppDeps, state: FastPathState, endpoint: RawEndpoint, response: ServerResponse, input: KeyedRequest, answer: Promise<KeyedAnswer>, started: number): void {
  void answer.then((settled) => finish(deps, state, endpoint, response, input, settled, started));
}

function finish(deps: AppDeps, state: FastPathState, endpoint: RawEndpoint, response: ServerResponse, input: KeyedRequest, answer: KeyedAnswer, started: number): void {
  writeAnswer(response, answer);
  const access = answer.access;
  if (access) deps.meter.record(access.account.id, access.id, endpoint.service, input.now, answer.failure);
  const ms = performance.now() - started;
  deps.metrics.observe(endpoint.route, 'GET', answer.status, ms / 1000);
  // The same one line per request as the Fastify routes write (not even built below level info).
  if (state.logRequests) state.log?.info({ reqId: input.requestId, method: 'GET', url: input.query === null ? input.path : `${input.path}?${input.query}`, status: answer.status, ms: Math.round(ms * 100) / 100 }, 'request');
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
