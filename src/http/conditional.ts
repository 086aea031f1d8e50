import type { FastifyReply, FastifyRequest } from 'fastify';
import { CompressedOnce } from '../render/compressed-once.js';
import type { Rendered } from '../render/detail.js';
import { acceptedEncoding, encodedEtag } from './encoding.js';
import { MIN_COMPRESSED_BYTES } from '../render/compression.js';

/** Seconds until the next wall-clock multiple of `intervalSeconds`: what a caller's cache may keep. */
export function secondsToBoundary(intervalSeconds: number, now: number): number {
  if (intervalSeconds <= 0) return 0;
  const intervalMs = intervalSeconds * 1000;
  return Math.ceil((intervalMs - (now % intervalMs)) / 1000);
}

/** True when `If-None-Match` names `etag` (weak or strong, or `*`). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true;
  for (const candidate of header.split(',')) {
    const tag = candidate.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

/** Compressed forms of bodies rendered per request (history, `?at=`), by ETag. */
const compressedOnce = new CompressedOnce();

/**
 * A JSON body with its ETag and cache lifetime, or 304 when the caller already
 * holds it; compressed (gzip or br) when the client asks and the body is over
 * 1 KB: from the body's per-second forms when it has them, else once per ETag.
 */
export function sendRendered(request: FastifyRequest, reply: FastifyReply, rendered: Rendered, maxAgeSeconds: number): FastifyReply {
  const stamped = rendered.stamped?.compressible ? rendered.stamped : null;
  const compressible = stamped !== null || (rendered.stamped === undefined && rendered.body.length > MIN_COMPRESSED_BYTES);
  const encoding = compressible ? acceptedEncoding(request.headers['accept-encoding']) : null;
  if (compressible) {
    const vary = reply.getHeader('vary');
    reply.header('vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding');
  }
  reply.header('cache-control', `private, max-age=${maxAgeSeconds}`).header('etag', encoding === null ? rendered.etag : encodedEtag(rendered.etag));
  if (matchesEtag(request.headers['if-none-match'], rendered.etag)) return reply.code(304).send();
  reply.header('content-type', 'application/json; charset=utf-8');
  if (encoding !== null) {
    const body = stamped ? stamped.encoded(encoding) : compressedOnce.get(rendered.etag, rendered.body, encoding);
    if (body) return reply.header('content-encoding', encoding).send(body);
  }
  return reply.send(rendered.body);
}

/** A pre-serialised JSON body that is never cached. */
export function sendJsonText(reply: FastifyReply, body: string): FastifyReply {
  return reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8').send(body);
}
