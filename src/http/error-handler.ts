import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZoneTime } from '../domain/time.js';
import { ALLOWED_METHODS } from './context.js';
import { ApiError, DEFAULT_MESSAGES, errorBody, type ErrorCode } from '../domain/errors.js';

/** Write the error envelope: `no-store`, JSON, the request id, plus any headers the error carries. */
export function sendError(reply: FastifyReply, error: ApiError, time: ZoneTime, requestId: string): FastifyReply {
  reply.request.failure = error.code;
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.statusCode)
    .header('cache-control', 'no-store')
    .header('content-type', 'application/json; charset=utf-8')
    .send(errorBody(error.code, error.message, time.format(time.now()), requestId));
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
    if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method)) {
      return sendError(reply, new ApiError('METHOD_NOT_ALLOWED', DEFAULT_MESSAGES.METHOD_NOT_ALLOWED, { allow: ALLOWED_METHODS }), time, request.id);
    }
    return sendError(reply, new ApiError('NOT_FOUND', `No endpoint at ${JSON.stringify(request.url.split('?')[0]!.slice(0, 200))}.`), time, request.id);
  });

  function toApiError(error: FastifyError, request: FastifyRequest): ApiError {
    if (error instanceof ApiError) return error;
    if (error.validation) {
      const issue = error.validation[0];
      if (error.validationContext === 'params') return new ApiError('INVALID_KEYS');
      const name = (issue?.instancePath?.replace(/^\//, '') || (issue?.params as { additionalProperty?: string })?.additionalProperty) ?? 'query';
      return new ApiError('INVALID_PARAMETER', `Query parameter "${name}" is invalid${issue?.message ? `: ${issue.message}` : ''}.`);
    }
    const status = error.statusCode ?? 500;
    if (status < 500) {
      const code: ErrorCode = status === 404 ? 'NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : 'INVALID_PARAMETER';
      return new ApiError(code);
    }
    request.log.error({ err: error, reqId: request.id }, 'request failed');
    return new ApiError('INTERNAL_ERROR');
  }
}
