import { randomUUID } from 'node:crypto';
import type { KeyAccess } from '../access/directory.js';
import type { Service } from '../domain/plan.js';
import type { ErrorCode } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The plan service a route belongs to; routes without one need no key. */
    service?: Service;
    /** For a route whose service depends on its query (detail with `at=` is `history`): admitted and counted as this. */
    serviceFor?: (query: Record<string, unknown>) => Service;
  }
  interface FastifyRequest {
    /** The authenticated key, set by the access hook on keyed routes. */
    access: KeyAccess | null;
    /** The error code sent, for the usage error log. */
    failure: ErrorCode | null;
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honour a sane incoming `x-request-id`, else make one. */
export function requestIdFor(header: string | string[] | undefined): string {
  const incoming = Array.isArray(header) ? header[0] : header;
  return incoming && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

export const EXPOSED_HEADERS = 'ETag, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';
