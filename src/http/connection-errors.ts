import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../domain/errors.js';
import { answerBytes, errorAnswer } from './answer.js';
import { METHOD_NOT_ALLOWED, requestIdFor } from './context.js';
import type { AppDeps } from './deps.js';

type ConnectionDeps = Pick<AppDeps, 'time' | 'metrics' | 'logger'>;

/** How long a refused connection keeps reading (and dropping) what the client still sends, so the answer is read rather than reset. */
const LINGER_MS = 1_000;

/** A method token (`FOO`, `QUERY2`) as opposed to bytes that are no HTTP at all. */
const METHOD_TOKEN = /^[A-Za-z][A-Za-z0-9_-]{0,31} /;

interface ParseError extends Error {
  code?: string;
  /** The bytes Node's parser choked on (a Buffer). */
  rawPacket?: unknown;
}

/**
 * Node's `clientError`: a request its parser refused (unknown method, bad
 * bytes in the request line or a header, headers over 16 KB) or one whose
 * headers did not arrive in time. Answered in the error envelope like every
 * other answer, then the connection closes.
 */
export function createClientErrorHandler(deps: ConnectionDeps): (error: ParseError, socket: Duplex) => void {
  return (error, socket) => {
    // Already answered: more bytes after the bad ones fail the parser again while the socket lingers.
    if (socket.destroyed || socket.writableEnded) return;
    if (error.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const refusal = refusalFor(error);
    deps.logger.debug({ code: error.code, status: refusal.statusCode }, 'unreadable request refused');
    deps.metrics.observe('unparsed', 'UNKNOWN', refusal.statusCode, 0);
    // A client too slow to send its headers gets no lingering: the socket goes as soon as the answer is out.
    refuse(deps, socket, refusal, undefined, error.code !== 'ERR_HTTP_REQUEST_TIMEOUT');
  };
}

/** Node's `connect` (a CONNECT request, which never reaches a request handler): 405 like any other method outside GET, HEAD and OPTIONS. */
export function createConnectHandler(deps: ConnectionDeps): (request: IncomingMessage, socket: Duplex) => void {
  return (request, socket) => {
    deps.metrics.observe('unmatched', 'CONNECT', METHOD_NOT_ALLOWED.statusCode, 0);
    refuse(deps, socket, METHOD_NOT_ALLOWED, request.headers['x-request-id'], true);
  };
}

function refusalFor(error: ParseError): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT');
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('REQUEST_HEADERS_TOO_LARGE');
    case 'HPE_INVALID_METHOD':
      // A method Node does not know is still a method; bytes that are no HTTP at all are a bad request.
      if (Buffer.isBuffer(error.rawPacket) && METHOD_TOKEN.test(error.rawPacket.subarray(0, 40).toString('latin1'))) return METHOD_NOT_ALLOWED;
      return new ApiError('BAD_REQUEST');
    default:
      return new ApiError('BAD_REQUEST');
  }
}

function refuse(deps: ConnectionDeps, socket: Duplex, error: ApiError, requestIdHeader: string | string[] | undefined, linger: boolean): void {
  const now = deps.time.now();
  const answer = errorAnswer(error, requestIdFor(requestIdHeader), deps.time.format(now));
  const close = () => socket.destroy();
  socket.end(answerBytes(answer, now), linger ? undefined : close);
  setTimeout(close, LINGER_MS).unref();
}

/** Whether a response on this connection has begun: raw bytes now would corrupt it. */
function responseStarted(socket: Duplex): boolean {
  return (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true;
}
