/** The fixed vocabulary of failures (docs/api.md#errors); one table maps each to its HTTP status. */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  INVALID_KEYS: 400,
  RATE_KEYS_LIMIT_EXCEEDED: 400,
  INVALID_PARAMETER: 400,
  API_KEY_MISSING: 401,
  API_KEY_INVALID: 401,
  SERVICE_NOT_ACTIVE: 403,
  REFERENCE_NOT_IN_PLAN: 403,
  ORIGIN_NOT_ALLOWED: 403,
  HISTORY_WINDOW_EXCEEDED: 403,
  RATE_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  RATE_LIMIT_EXCEEDED: 429,
  TOO_MANY_FAILED_ATTEMPTS: 429,
  TOO_MANY_STREAMS: 429,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const DEFAULT_MESSAGES: Record<ErrorCode, string> = {
  BAD_REQUEST: 'The request is malformed and cannot be read as HTTP.',
  INVALID_KEYS: 'The keys segment must hold one to ten comma-separated reference keys.',
  RATE_KEYS_LIMIT_EXCEEDED: 'At most 10 distinct keys may be requested at once.',
  INVALID_PARAMETER: 'A query parameter is invalid.',
  API_KEY_MISSING: 'Send your API key in the x-api-key header.',
  API_KEY_INVALID: 'The API key is unknown, revoked or expired.',
  SERVICE_NOT_ACTIVE: 'This service is not active for your account.',
  REFERENCE_NOT_IN_PLAN: 'None of the requested references is included in your plan.',
  ORIGIN_NOT_ALLOWED: 'This origin is not allowed for your API key.',
  HISTORY_WINDOW_EXCEEDED: 'The requested time lies before the history your plan covers.',
  RATE_NOT_FOUND: 'No requested key matches an active reference.',
  NOT_FOUND: 'No such endpoint.',
  METHOD_NOT_ALLOWED: 'Only GET, HEAD and OPTIONS are allowed.',
  REQUEST_TIMEOUT: 'The request was not received in time.',
  RATE_LIMIT_EXCEEDED: 'The request limit for your key is spent; retry after the time in Retry-After.',
  TOO_MANY_FAILED_ATTEMPTS: 'Too many requests with an invalid API key from your address; retry later.',
  TOO_MANY_STREAMS: 'Your account already holds as many open streams as its plan allows.',
  REQUEST_HEADERS_TOO_LARGE: 'The request line and headers exceed 16 KB.',
  INTERNAL_ERROR: 'An internal error occurred; quote the request id when reporting it.',
  SERVICE_UNAVAILABLE: 'The service is not ready; retry shortly.',
};

/** A failure the client should see, with its code and an English sentence. */
export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string = DEFAULT_MESSAGES[code],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = ERROR_STATUS[code];
  }
}

/** The error envelope; `generated_at` and `request_id` come from the caller. */
export function errorBody(code: ErrorCode, message: string, generatedAt: string, requestId: string): string {
  return JSON.stringify({ success: false, status: 'error', generated_at: generatedAt, error: code, message, request_id: requestId });
}
