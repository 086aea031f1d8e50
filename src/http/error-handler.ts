import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZoneTime } from '../domain/time.js';
import { ApiError, type ErrorCode } from '../domain/errors.js';
import { errorAnswer, sendAnswer } from './answer.js';
import { METHOD_NOT_ALLOWED } from './context.js';
import { notOneOf, unknownParameter } from './pipeline/params.js';

/** Send an error through Fastify, written by the one error writer (see answer.ts). */
export function sendError(reply: FastifyReply, error: ApiError, time: ZoneTime, requestId: string): FastifyReply {
  return sendAnswer(reply, errorAnswer(error, requestId, time.format(time.now())));
}

/**
 * One error handler for the whole app: known failures keep their code,
 * validation failures name the parameter, anything else is a logged 500
 * whose message reveals nothing of the internals.
 */
export function installErrorHandling(app: FastifyInstance, time: ZoneTime): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    sendError(reply, toApiError(error, request), time, request.id);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.originalUrl.split('?')[0]!;
    return sendError(reply, new ApiError('NOT_FOUND', `No endpoint at ${JSON.stringify(path.slice(0, 200))}.`), time, request.id);
  });
}

/** Fastify's own errors by status, in the contract's vocabulary. */
const FRAMEWORK_CODES: Record<number, ErrorCode> = { 404: 'NOT_FOUND', 408: 'REQUEST_TIMEOUT', 431: 'REQUEST_HEADERS_TOO_LARGE', 503: 'SERVICE_UNAVAILABLE' };

function toApiError(error: FastifyError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  // A path parameter is always a reference key (history's `{key}`): a bad one is INVALID_KEYS, as on detail.
  if (error.validation) return error.validationContext === 'params' ? new ApiError('INVALID_KEYS') : queryError(error, request);
  const status = error.statusCode ?? 500;
  if (status === 405) return METHOD_NOT_ALLOWED;
  // Anything else a client caused (an unreadable body, a bad content type) is a malformed request.
  if (status < 500 || status === 503) return new ApiError(FRAMEWORK_CODES[status] ?? 'BAD_REQUEST');
  request.log.error({ err: error, reqId: request.id }, 'request failed');
  return new ApiError('INTERNAL_ERROR');
}

/** A query that fails its schema: the parameter is named, an enum lists its values, an unknown one lists what the endpoint takes. */
function queryError(error: FastifyError, request: FastifyRequest): ApiError {
  const issue = error.validation![0];
  const params = (issue?.params ?? {}) as { additionalProperty?: string; allowedValues?: unknown[] };
  if (params.additionalProperty !== undefined) {
    const schema = request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
    return unknownParameter(params.additionalProperty, Object.keys(schema?.properties ?? {}));
  }
  const name = issue?.instancePath?.replace(/^\//, '') || 'query';
  if (issue?.keyword === 'enum' && params.allowedValues) return notOneOf(name, params.allowedValues);
  return new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is invalid${issue?.message ? `: it ${issue.message}` : ''}.`);
}
