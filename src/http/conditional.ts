import type { FastifyReply } from 'fastify';

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

/** A pre-serialised JSON body that is never cached. */
export function sendJsonText(reply: FastifyReply, body: string): FastifyReply {
  return reply.header('cache-control', 'no-store').header('content-type', 'application/json; charset=utf-8').send(body);
}
