import type { ServerResponse } from 'node:http';
import type { TSchema } from '@sinclair/typebox';
import type { AccountAccess, KeyAccess } from '../../access/directory.js';
import type { Service } from '../../domain/plan.js';
import type { Encoding } from '../../render/compression.js';
import type { StampedBody } from '../../render/stamped-body.js';
import type { PreparedBody } from '../../render/fixed-body.js';
import type { Exchange } from './exchange.js';
import type { ParamSpecs, PathParamSpec, QueryParams, Values } from './params.js';

/** A body prepared ahead of time (per snapshot): stamped with the time once a second (detail, catalogue), or fixed (the compatibility routes). */
export interface PreparedAnswer {
  body: PreparedBody;
  etag: string;
  /** Follows the time in the body's head and changes only with it. */
  stampExtra?: string;
  /** Headers prepared with the body, as a flat name, value list (the compatibility routes' x-nerkh-* lists); sent with a 304 too. */
  headers?: readonly string[];
}

/** A body built for this request (history, a past moment, status, usage, the webservice endpoint). */
export interface RenderedAnswer {
  body: string | Buffer;
  /** null: the answer is of this moment only: no ETag, `private, no-cache`. */
  etag: string | null;
  /** The prepared body `body` was stamped from, when it can give compressed forms of it. */
  stamped?: StampedBody;
  /** Whether the body is worth compressing, when its maker says so (a string's length over the threshold otherwise). */
  compressible?: boolean;
  /** The body already compressed (off the event loop), used when the caller accepts this coding. */
  encoded?: { encoding: Encoding; body: Buffer } | null;
  /** How long the caller may keep it. */
  maxAgeSeconds: number;
}

/** A stream that passed every check and holds its slot: `start` takes the connection over (after the pipeline has logged it). */
export interface OpenedStream {
  start(response: ServerResponse, headers: string[]): void;
}

/** What the API document says of an endpoint besides its parameters. */
export interface EndpointDoc {
  tags: string[];
  summary: string;
  description?: string;
  /** The 200 answer: a schema, or a whole response object (a stream). */
  ok: TSchema | Record<string, unknown>;
  /** Whether the answer carries an ETag, so If-None-Match may get 304. */
  conditional: boolean;
  /** The error statuses it documents, besides those every operation has (see openapi.ts). */
  errors: number[];
}

/**
 * Everything the pipeline (keyed.ts) needs to admit, answer and finish a
 * keyed request, and the Fastify adapter to register and document it. The
 * answer functions receive the request (`exchange`), the key's account, the
 * parsed query and the decoded path segment ('' without one); they throw
 * ApiError for a refusal.
 */
interface EndpointBase<S extends ParamSpecs> {
  /** The route, as Fastify writes it (`/v1/rates/:keys`); also the metrics' route label. */
  path: string;
  /** The plan service it belongs to: admission checks the plan has it, and usage counts under it. */
  service: Service;
  query: QueryParams<S>;
  pathParam?: PathParamSpec;
  /** A query parameter that may carry the key instead of x-api-key (EventSource cannot send headers). */
  keyParam?: string;
  /** Answered on node:http before Fastify routes it when its URL is plain (see raw.ts). */
  raw?: boolean;
  /** Other paths answered as this one (a peer's own spellings: navasan's trailing slash): the raw path matches them, Fastify routes them here (url.ts). Only for a path without a segment. */
  spellings?: readonly string[];
  /** A request whose query names `param` is answered by `endpoint` instead (the same path, its own service and parameters). */
  instead?: { param: string; endpoint: KeyedEndpoint };
  doc: EndpointDoc;
  /** Where the path segment sits in the path, worked out once by keyedEndpoint. */
  segment?: { prefix: string; suffix: string } | null;
}

export interface PreparedEndpoint<S extends ParamSpecs = ParamSpecs> extends EndpointBase<S> {
  answer: 'prepared';
  prepare(exchange: Exchange, account: AccountAccess, params: Values<S>, segment: string): PreparedAnswer;
}

export interface RenderedEndpoint<S extends ParamSpecs = ParamSpecs> extends EndpointBase<S> {
  answer: 'rendered';
  render(exchange: Exchange, account: AccountAccess, params: Values<S>, segment: string): RenderedAnswer | Promise<RenderedAnswer>;
}

export interface StreamEndpoint<S extends ParamSpecs = ParamSpecs> extends EndpointBase<S> {
  answer: 'stream';
  open(exchange: Exchange, access: KeyAccess, params: Values<S>): Promise<OpenedStream>;
}

export type KeyedEndpoint = PreparedEndpoint | RenderedEndpoint | StreamEndpoint;

/** Typed at the definition, erased in the list (each answer function reads only its own parameters). */
export function keyedEndpoint<S extends ParamSpecs>(endpoint: PreparedEndpoint<S> | RenderedEndpoint<S> | StreamEndpoint<S>): KeyedEndpoint {
  if (endpoint.instead && endpoint.instead.endpoint.path !== endpoint.path) throw new Error(`${endpoint.path}: an answer instead must share its path`);
  if (endpoint.pathParam && segmentOf(endpoint.path) === null) throw new Error(`${endpoint.path}: a path parameter needs one :segment`);
  if (endpoint.spellings?.length && segmentOf(endpoint.path) !== null) throw new Error(`${endpoint.path}: only a path without a segment may have other spellings`);
  // Every descriptor gets the same fields in the same order: the pipeline's property reads then see one shape, not one per endpoint.
  const answers = endpoint as { prepare?: unknown; render?: unknown; open?: unknown };
  return {
    path: endpoint.path,
    service: endpoint.service,
    query: endpoint.query,
    pathParam: endpoint.pathParam,
    keyParam: endpoint.keyParam,
    raw: endpoint.raw ?? false,
    spellings: endpoint.spellings ?? [],
    instead: endpoint.instead,
    doc: endpoint.doc,
    segment: segmentOf(endpoint.path),
    answer: endpoint.answer,
    prepare: answers.prepare,
    render: answers.render,
    open: answers.open,
  } as unknown as KeyedEndpoint;
}

/** Where a route's one `:segment` sits: the path before and after it; null without one. */
export function segmentOf(path: string): { prefix: string; suffix: string } | null {
  const colon = path.indexOf('/:');
  if (colon === -1) return null;
  const end = path.indexOf('/', colon + 1);
  return { prefix: path.slice(0, colon + 1), suffix: end === -1 ? '' : path.slice(end) };
}
