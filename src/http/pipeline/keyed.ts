import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { admit } from '../../access/admission.js';
import type { KeyAccess } from '../../access/directory.js';
import { writeAnswer } from '../answer.js';
import { MISSING_HOST } from '../context.js';
import { edgeHeaders } from '../edge-headers.js';
import type { AppDeps } from '../deps.js';
import type { ServingState } from '../serving-state.js';
import type { KeyedEndpoint, OpenedStream, RenderedAnswer } from './endpoint.js';
import type { Exchange } from './exchange.js';
import { finish } from './finish.js';
import { queryNames, queryValue } from './params.js';
import { writeFailure, writePrepared, writeRendered } from './reply.js';

export type PipelineDeps = Pick<AppDeps, 'time' | 'directory' | 'limiter' | 'failedAttempts' | 'logger' | 'meter' | 'metrics'>;

/** What the pipeline runs in: the app's parts, and its serving state (the logger, whether to log). */
export interface Pipeline {
  deps: PipelineDeps;
  state: ServingState;
}

/**
 * Every keyed request, whichever path brought it (the raw node:http path,
 * the Fastify adapter), in the documented order (docs/api.md#order-of-checks):
 * the key, plan, origin and limit (admission), then the query, then the path
 * segment and the endpoint's own answer; then the answer is written and the
 * request finished (metered, counted, logged). Framework-free and never
 * throws: an unexpected failure is logged and answered as INTERNAL_ERROR.
 *
 * The common case runs to its end at once, creating no promise and no
 * closure; only admission waiting for the shared limiter (rare), an answer
 * that reads a store, and a stream continue later.
 */
export function serveKeyed(pipeline: Pipeline, route: KeyedEndpoint, exchange: Exchange, response: ServerResponse): void {
  const instead = route.instead;
  const endpoint = instead !== undefined && exchange.query !== null && queryNames(exchange.query, instead.param) ? instead.endpoint : route;
  exchange.headers = edgeHeaders(exchange.requestId, exchange.origin);
  // An HTTP/1.1 request without Host is refused before anything else (RFC 9112 §3.2).
  if (!exchange.hasHost) return refuse(pipeline, endpoint, exchange, response, MISSING_HOST);
  const key = exchange.apiKey ?? (endpoint.keyParam !== undefined && exchange.query !== null ? keyInQuery(exchange.query, endpoint.keyParam) : undefined);
  let admitted: KeyAccess | Promise<KeyAccess>;
  try {
    admitted = admit(pipeline.deps, endpoint.service, key, exchange.origin, exchange.address, exchange.now, exchange);
  } catch (caught) {
    return refuse(pipeline, endpoint, exchange, response, caught);
  }
  if (admitted instanceof Promise) answerLater(pipeline, endpoint, exchange, response, admitted);
  else answer(pipeline, endpoint, exchange, response, admitted);
}

/** The rare admission that waits for the shared limiter, kept apart so that `serveKeyed` itself creates no closure. */
function answerLater(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, response: ServerResponse, admitted: Promise<KeyAccess>): void {
  admitted.then(
    (access) => answer(pipeline, endpoint, exchange, response, access),
    (caught: unknown) => refuse(pipeline, endpoint, exchange, response, caught),
  );
}

/** Everything after admission: the query, the segment, and the endpoint's answer. */
function answer(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, response: ServerResponse, access: KeyAccess): void {
  const admittedHeaders = exchange.headers.length;
  try {
    // While overloaded, the callers that cost the most are refused here, once their key is known (load-shedding.ts).
    if (pipeline.state.shedding && pipeline.state.costs.isShed(access.account.id)) throw pipeline.state.overloaded;
    // A plain request (no query, the usual poll) gets the frozen defaults, unless the endpoint requires a parameter.
    const params = endpoint.query.parse(exchange.query);
    const segment = endpoint.pathParam === undefined ? '' : pathSegment(endpoint, exchange.path);
    switch (endpoint.answer) {
      case 'prepared':
        writePrepared(pipeline.deps, exchange, access.account, endpoint.prepare(exchange, access.account, params, segment));
        break;
      case 'rendered': {
        const rendered = endpoint.render(exchange, access.account, params, segment);
        if (rendered instanceof Promise) return renderLater(pipeline, endpoint, exchange, response, rendered, admittedHeaders);
        writeRendered(exchange, rendered);
        break;
      }
      case 'stream':
        return openLater(pipeline, endpoint, exchange, response, endpoint.open(exchange, access, params), admittedHeaders);
    }
  } catch (caught) {
    writeFailure(pipeline.deps, exchange, caught, admittedHeaders);
  }
  complete(pipeline, endpoint, exchange, response);
}

function renderLater(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, response: ServerResponse, rendered: Promise<RenderedAnswer>, admittedHeaders: number): void {
  rendered
    .then(
      (done) => writeRendered(exchange, done),
      (caught: unknown) => writeFailure(pipeline.deps, exchange, caught, admittedHeaders),
    )
    .then(() => complete(pipeline, endpoint, exchange, response));
}

/** A stream that opened is finished when it opens (it counts as one request, status 200), then takes the connection over. */
function openLater(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, response: ServerResponse, opening: Promise<OpenedStream>, admittedHeaders: number): void {
  opening.then(
    (opened) => {
      finishExchange(pipeline, endpoint, exchange, 'stream opened');
      opened.start(response, exchange.headers);
    },
    (caught: unknown) => {
      writeFailure(pipeline.deps, exchange, caught, admittedHeaders);
      complete(pipeline, endpoint, exchange, response);
    },
  );
}

function refuse(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, response: ServerResponse, caught: unknown): void {
  writeFailure(pipeline.deps, exchange, caught, -1);
  complete(pipeline, endpoint, exchange, response);
}

function complete(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, response: ServerResponse): void {
  writeAnswer(response, exchange, exchange.method === 'HEAD');
  finishExchange(pipeline, endpoint, exchange, 'request');
}

function finishExchange(pipeline: Pipeline, endpoint: KeyedEndpoint, exchange: Exchange, message: string): void {
  const ms = performance.now() - exchange.started;
  finish(pipeline.deps, pipeline.state, endpoint.path, exchange.method, exchange.url, exchange.requestId, exchange.status, ms, endpoint.service, exchange, message);
}

/**
 * The route's one path segment, percent-decoded: read from the path as
 * received (both paths see the same bytes), decoded whole only when it holds
 * `%`. A segment that cannot be decoded or misses the pattern is the
 * parameter's own error (after admission, like any other bad segment).
 */
function pathSegment(endpoint: KeyedEndpoint, path: string): string {
  const spec = endpoint.pathParam!;
  const { prefix, suffix } = endpoint.segment!;
  let whole = path;
  if (path.indexOf('%') !== -1) {
    try {
      whole = decodeURIComponent(path);
    } catch {
      throw spec.invalid;
    }
  }
  if (!whole.startsWith(prefix) || !whole.endsWith(suffix) || whole.length < prefix.length + suffix.length) throw spec.invalid;
  const segment = whole.slice(prefix.length, whole.length - suffix.length);
  if (spec.pattern !== undefined && !spec.pattern.test(segment)) throw spec.invalid;
  return segment;
}

/** The key a query carries (the stream's and navasan's `api_key`, BrsApi's `key`), read before admission; the query is checked whole only after it. */
function keyInQuery(query: string, name: string): string | undefined {
  return queryValue(query, name);
}
