import { randomUUID } from 'node:crypto';
import type { Service } from '../domain/plan.js';
import { ApiError, DEFAULT_MESSAGES } from '../domain/errors.js';
import type { HistoryAnswers } from '../history/answers/history-answers.js';
import type { KeyedEndpoint } from './pipeline/endpoint.js';

/** A route that needs a key, as registered. */
export interface KeyedRoute {
  url: string;
  service: Service;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every keyed route (GET), collected as routes register: the security suite runs against each. */
    keyedRoutes: readonly KeyedRoute[];
    /** Where history answers are rendered (tests stop its worker threads to see a failure answered and the pool recover). */
    historyAnswers: HistoryAnswers;
  }
  interface FastifyContextConfig {
    /** The keyed endpoint a route was registered from (src/http/endpoints/); routes without one need no key. */
    endpoint?: KeyedEndpoint;
  }
  interface FastifyRequest {
    /** The request went to the keyed pipeline, which finishes it (meter, metrics, log line) itself. */
    piped: boolean;
  }
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honour a sane incoming `x-request-id`, else make one. */
export function requestIdFor(header: string | string[] | undefined): string {
  const incoming = Array.isArray(header) ? header[0] : header;
  return incoming && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

/** The methods the service answers (docs/api.md#conventions); any other is 405 with `Allow`. */
export function isAllowedMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

export const METHOD_NOT_ALLOWED = new ApiError('METHOD_NOT_ALLOWED', DEFAULT_MESSAGES.METHOD_NOT_ALLOWED, { allow: ALLOWED_METHODS });

export const MISSING_HOST = new ApiError('BAD_REQUEST', 'An HTTP/1.1 request must carry a Host header.');
