import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ApiError, errorBody } from '../domain/errors.js';
import { edgeHeaders } from './edge-headers.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A response ready to write, whoever writes it: node:http on the raw path,
 * Fastify on its routes and handlers, or bytes on a bare socket.
 */
export interface Answer {
  status: number;
  /** A flat [name, value, …] list that starts with x-request-id. */
  headers: string[];
  /** null: no body (304, or nothing to say). */
  body: Buffer | null;
}

/**
 * The one error writer: appends to `headers` what every error carries (the
 * error's own headers such as Retry-After or Allow, `no-store`, the JSON type
 * and length) and returns the envelope of docs/api.md#errors. `headers` must already
 * start with x-request-id (and may hold CORS and rate-limit headers).
 */
export function appendError(headers: string[], error: ApiError, requestId: string, generatedAt: string): Buffer {
  for (const name in error.headers) headers.push(name, error.headers[name]!);
  const body = Buffer.from(errorBody(error.code, error.message, generatedAt, requestId));
  headers.push('cache-control', 'no-store', 'content-type', JSON_TYPE, 'content-length', String(body.length));
  return body;
}

/** An error answer with nothing else to say. */
export function errorAnswer(error: ApiError, requestId: string, generatedAt: string): Answer {
  const headers = edgeHeaders(requestId, undefined);
  return { status: error.statusCode, headers, body: appendError(headers, error, requestId, generatedAt) };
}

/** Write an answer on node:http; `head`: a HEAD request's (node:http leaves its body out itself, an injected response would not). */
export function writeAnswer(response: ServerResponse, answer: Answer, head = false): void {
  response.writeHead(answer.status, answer.headers);
  if (answer.body === null || head) response.end();
  else response.end(answer.body);
}

/** Send an answer through Fastify, so its hooks (metrics, the request log, metering) see it. */
export function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  const headers = answer.headers;
  for (let i = 0; i < headers.length; i += 2) reply.header(headers[i]!, headers[i + 1]);
  return reply.code(answer.status).send(answer.body ?? undefined);
}

/**
 * An answer as HTTP/1.1 bytes, for a socket with no request object to answer
 * through (a request Node could not parse, CONNECT). The connection closes after it.
 */
export function answerBytes(answer: Answer, now: number): Buffer {
  let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\n`;
  for (let i = 0; i < answer.headers.length; i += 2) head += `${answer.headers[i]}: ${answer.headers[i + 1]}\r\n`;
  head += `date: ${new Date(now).toUTCString()}\r\nconnection: close\r\n\r\n`;
  return answer.body === null ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), answer.body]);
}
