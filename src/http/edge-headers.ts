import type { FastifyReply } from 'fastify';

/** What a browser's script may read of an answer (CORS). */
export const EXPOSED_HEADERS =
  'ETag, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Nerkh-Unknown-Items, X-Nerkh-Denied-Items, X-Nerkh-Unavailable-Items, X-Nerkh-Stale-Items';

/**
 * The headers every answer starts with, on the raw path and on Fastify's
 * routes alike: its request id and, when an Origin came, CORS and
 * `Vary: Origin`. A flat [name, value, …] list, as node:http writes it;
 * later headers are appended, and Vary is found by name (`addVary`,
 * `setVary`), never by position.
 */
export function edgeHeaders(requestId: string, origin: string | undefined): string[] {
  return origin === undefined
    ? ['x-request-id', requestId]
    : ['x-request-id', requestId, 'access-control-allow-origin', origin, 'vary', 'Origin', 'access-control-expose-headers', EXPOSED_HEADERS];
}

/** The same headers on a Fastify reply (routes without a key, and every Fastify error). */
export function setEdgeHeaders(reply: FastifyReply, requestId: string, origin: string | undefined): void {
  const headers = edgeHeaders(requestId, origin);
  for (let i = 0; i < headers.length; i += 2) reply.header(headers[i]!, headers[i + 1]);
}

/** Add `value` to Vary: to the one there, or as a new header. */
export function addVary(headers: string[], value: string): void {
  const at = varyAt(headers);
  if (at < 0) headers.push('vary', value);
  else headers[at] = `${headers[at]}, ${value}`;
}

/** Vary back to `value` alone (an error after a success's headers were cut), or none when `value` is null. */
export function setVary(headers: string[], value: string | null): void {
  const at = varyAt(headers);
  if (at < 0) {
    if (value !== null) headers.push('vary', value);
  } else if (value !== null) headers[at] = value;
  else headers.splice(at - 1, 2);
}

/** Where Vary's value sits, or -1. */
function varyAt(headers: string[]): number {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'vary') return i + 1;
  return -1;
}
