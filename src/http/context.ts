import { randomUUID } from 'node:crypto';
import type { KeyAccess } from '../access/directory.js';
import type { Service } from '../domain/plan.js';
import { ApiError, DEFAULT_MESSAGES, type ErrorCode } from '../domain/errors.js';

/** A route that needs a key, as registered. */
export interface KeyedRoute {
  url: string;
  service: Service;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every keyed route (GET), collected as routes register: the security suite runs against each. */
    keyedRoutes: readonly KeyedRoute[];
  }
  interface FastifyContextConfig {
    /** The plan service a route belongs to; routes without one need no key. */
    service?: Service;
    /** The route runs admission itself (detail: answerDetail, shared with the raw path). */
    admitsItself?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated key, set by the access hook on keyed routes. */
    access: KeyAccess | null;
    /** The error code sent, for the usage error log. */
    failure: ErrorCode | null;
    /** The service the request counts under when not its route's (detail with `at=` is `history`). */
    meteredAs: Service | null;
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

/** The methods the service answers (PRODUCT §1); any other is 405 with `Allow`. */
export function isAllowedMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

export const METHOD_NOT_ALLOWED = new ApiError('METHOD_NOT_ALLOWED', DEFAULT_MESSAGES.METHOD_NOT_ALLOWED, { allow: ALLOWED_METHODS });

export const MISSING_HOST = new ApiError('BAD_REQUEST', 'An HTTP/1.1 request must carry a Host header.');
