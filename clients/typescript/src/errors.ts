import type { ErrorCode } from './types.js';

/** A code of our own: the body was not the server's error envelope (a proxy's page, an empty body). */
export const UNKNOWN_ERROR = 'UNKNOWN_ERROR';
/** A code of our own: no HTTP answer at all (refused, reset, DNS). */
export const NETWORK_ERROR = 'NETWORK_ERROR';

export type NerkhErrorCode = ErrorCode | typeof UNKNOWN_ERROR | typeof NETWORK_ERROR | (string & {});

/**
 * The one error every method throws. `code` is the envelope's `error`
 * (`UNKNOWN_ERROR` when the body is not an envelope), `requestId` is the
 * envelope's `request_id` or the `x-request-id` header, `retryAfter` the
 * `Retry-After` header in seconds.
 */
export class NerkhError extends Error {
  override readonly name = 'NerkhError';
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  readonly code: NerkhErrorCode;
  readonly requestId: string | null;
  /** Seconds to wait before retrying, from `Retry-After`; null when the server sent none. */
  readonly retryAfter: number | null;
  /** The response headers; null when no answer came. */
  readonly headers: Headers | null;
  /** The body as received (parsed when it was JSON). */
  readonly body: unknown;

  constructor(init: { status: number; code: NerkhErrorCode; message: string; requestId?: string | null; retryAfter?: number | null; headers?: Headers | null; body?: unknown; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.retryAfter = init.retryAfter ?? null;
    this.headers = init.headers ?? null;
    this.body = init.body;
  }

  /** The error an HTTP answer that is not a success stands for; `body` as read (JSON parsed when it parsed). */
  static fromResponse(response: Response, body: unknown): NerkhError {
    const envelope = isEnvelope(body) ? body : null;
    const statusText = response.statusText ? ` ${response.statusText}` : '';
    return new NerkhError({
      status: response.status,
      code: envelope?.error ?? UNKNOWN_ERROR,
      message: envelope?.message ?? `HTTP ${response.status}${statusText}`,
      requestId: envelope?.request_id ?? response.headers.get('x-request-id'),
      retryAfter: parseRetryAfter(response.headers.get('retry-after')),
      headers: response.headers,
      body,
    });
  }

  static network(cause: unknown): NerkhError {
    return new NerkhError({ status: 0, code: NETWORK_ERROR, message: `No answer from the server: ${cause instanceof Error ? cause.message : String(cause)}`, cause });
  }
}

function isEnvelope(body: unknown): body is { error: string; message: string; request_id?: string } {
  if (!body || typeof body !== 'object') return false;
  const candidate = body as Record<string, unknown>;
  return candidate.success === false && typeof candidate.error === 'string' && typeof candidate.message === 'string';
}

/** `Retry-After` as seconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // Every HTTP-date form starts with the day's name; Date.parse alone would take "-5" for a year.
  const date = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The text of a body, parsed as JSON when it is JSON. */
export async function readBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
