/** What a response's headers tell a caller beyond its body. */
export interface ResponseMeta {
  status: number;
  requestId: string | null;
  /** Send it back as If-None-Match (through `client.api`) to get 304 while nothing changed. */
  etag: string | null;
  cacheControl: string | null;
  rateLimit: RateLimit | null;
  /** Every header, for anything not named here. */
  headers: Headers;
}

/** The binding limit window, from the X-RateLimit-* headers (and the IETF draft's RateLimit/RateLimit-Policy as sent). */
export interface RateLimit {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
  /** `RateLimit-Policy` as sent, e.g. `"minute";q=60;w=60`. */
  policy: string | null;
}

export function metaOf(response: Response): ResponseMeta {
  const headers = response.headers;
  return {
    status: response.status,
    requestId: headers.get('x-request-id'),
    etag: headers.get('etag'),
    cacheControl: headers.get('cache-control'),
    rateLimit: rateLimitOf(headers),
    headers,
  };
}

function rateLimitOf(headers: Headers): RateLimit | null {
  const limit = integer(headers.get('x-ratelimit-limit'));
  const remaining = integer(headers.get('x-ratelimit-remaining'));
  const reset = integer(headers.get('x-ratelimit-reset'));
  if (limit === null || remaining === null || reset === null) return null;
  return { limit, remaining, reset, policy: headers.get('ratelimit-policy') };
}

function integer(value: string | null): number | null {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}
