import type { AccountAccess } from '../../access/directory.js';
import { ApiError } from '../../domain/errors.js';
import { redactKeysInUrl } from '../../domain/redact.js';
import { CompressedOnce } from '../../render/compressed-once.js';
import { MIN_COMPRESSED_BYTES } from '../../render/compression.js';
import { appendError, JSON_TYPE } from '../answer.js';
import { matchesEtag, secondsToBoundary } from '../conditional.js';
import type { AppDeps } from '../deps.js';
import { addVary, setVary } from '../edge-headers.js';
import { acceptedEncoding, encodedEtag } from '../encoding.js';
import type { PreparedAnswer, RenderedAnswer } from './endpoint.js';
import type { Exchange } from './exchange.js';

/**
 * Writing an answer into the exchange: status, headers and body, for the
 * pipeline to send. Headers are a flat list that starts with the edge's
 * (src/http/edge-headers.ts), then the limit headers admission added.
 */
const cacheControls: string[] = [];
/** Compressed forms of bodies rendered per request (history, `?at=`), by ETag. */
const compressedOnce = new CompressedOnce();

/**
 * A prepared body: ETag and Cache-Control (until the caller's next refresh
 * boundary), or 304 when the caller already holds it; a body over 1 KB goes
 * out compressed when the client asks (see StampedBody).
 */
export function writePrepared(deps: Pick<AppDeps, 'time'>, exchange: Exchange, account: AccountAccess, prepared: PreparedAnswer): void {
  const headers = exchange.headers;
  const stamped = prepared.body;
  // Only a body worth compressing varies with Accept-Encoding.
  const encoding = stamped.compressible ? acceptedEncoding(exchange.acceptEncoding) : null;
  if (stamped.compressible) varyOnEncoding(exchange);
  headers.push('cache-control', cacheControl(secondsToBoundary(account.plan.refresh_interval_seconds, exchange.now)), 'etag', encoding === null ? prepared.etag : encodedEtag(prepared.etag));
  const extra = prepared.headers;
  if (extra !== undefined) for (let i = 0; i < extra.length; i++) headers.push(extra[i]!);
  if (matchesEtag(exchange.ifNoneMatch, prepared.etag)) {
    exchange.status = 304;
    return;
  }
  let body = stamped.at(deps.time.format(exchange.now), prepared.stampExtra);
  if (encoding !== null) {
    body = stamped.encoded(encoding)!;
    headers.push('content-encoding', encoding);
  }
  headers.push('content-type', JSON_TYPE, 'content-length', String(body.length));
  exchange.body = body;
}

/**
 * A body built for this request: with an ETag, as a prepared one (compressed
 * from its stamped forms when it has them, else once per ETag and second);
 * without one, `private, no-cache` and never compressed.
 */
export function writeRendered(exchange: Exchange, rendered: RenderedAnswer): void {
  const headers = exchange.headers;
  const etag = rendered.etag;
  if (etag === null) {
    const body = bytes(rendered.body);
    headers.push('cache-control', 'private, no-cache', 'content-type', JSON_TYPE, 'content-length', String(body.length));
    exchange.body = body;
    return;
  }
  const stamped = rendered.stamped?.compressible ? rendered.stamped : null;
  const compressible = stamped !== null || (rendered.stamped === undefined && (rendered.compressible ?? rendered.body.length > MIN_COMPRESSED_BYTES));
  const encoding = compressible ? acceptedEncoding(exchange.acceptEncoding) : null;
  if (compressible) varyOnEncoding(exchange);
  headers.push('cache-control', cacheControl(rendered.maxAgeSeconds), 'etag', encoding === null ? etag : encodedEtag(etag));
  if (matchesEtag(exchange.ifNoneMatch, etag)) {
    exchange.status = 304;
    return;
  }
  let body: Buffer | null = null;
  if (encoding !== null) {
    const made = rendered.encoded;
    body = stamped ? stamped.encoded(encoding) : made && made.encoding === encoding ? made.body : compressedOnce.get(etag, rendered.body, encoding);
  }
  if (body !== null) headers.push('content-encoding', encoding!);
  else body = bytes(rendered.body);
  headers.push('content-type', JSON_TYPE, 'content-length', String(body.length));
  exchange.body = body;
}

/**
 * An error answer; `keepHeaders` (when ≥ 0) cuts the headers back to what
 * admission left: headers of a success cut short go, the limit headers stay,
 * and Vary says Origin only. Anything but an ApiError is logged and answered
 * as INTERNAL_ERROR, its message revealing nothing.
 */
export function writeFailure(deps: Pick<AppDeps, 'time' | 'logger'>, exchange: Exchange, caught: unknown, keepHeaders: number): void {
  const headers = exchange.headers;
  if (keepHeaders >= 0) headers.length = keepHeaders;
  setVary(headers, exchange.origin !== undefined ? 'Origin' : null);
  let error: ApiError;
  if (caught instanceof ApiError) error = caught;
  else {
    deps.logger.error({ err: caught, reqId: exchange.requestId }, 'request failed');
    error = new ApiError('INTERNAL_ERROR');
  }
  exchange.status = error.statusCode;
  exchange.body = appendError(headers, error, exchange.requestId, deps.time.format(exchange.now));
  // The usage error log shows the address, never a key in it (a client may put one anywhere).
  exchange.failure = { status: error.statusCode, error: error.code, path: redactKeysInUrl(exchange.url) };
}

function varyOnEncoding(exchange: Exchange): void {
  addVary(exchange.headers, 'Accept-Encoding');
}

function cacheControl(maxAge: number): string {
  return (cacheControls[maxAge] ??= `private, max-age=${maxAge}`);
}

function bytes(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body) : body;
}
