/**
 * Why an HTTP request failed, in words for the status page: the cause undici
 * hides behind its bare "fetch failed" (refused, reset, DNS, TLS, timeout).
 * Built from error codes only, never from messages, which name hosts and
 * addresses the public page must not show.
 */
export function describeFetchFailure(error: unknown): string {
  const code = causeCode(error);
  if (code === null) return 'request failed';
  const known = KNOWN[code];
  if (known) return known;
  if (TLS_CODES.test(code)) return `TLS handshake failed (${code})`;
  return `request failed (${code})`;
}

const KNOWN: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection reset by the server',
  UND_ERR_SOCKET: 'connection closed by the server',
  ENOTFOUND: 'DNS lookup failed: host not found',
  EAI_AGAIN: 'DNS lookup failed: temporary failure',
  EAI_FAIL: 'DNS lookup failed',
  ENODATA: 'DNS lookup failed: no address',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'request timed out waiting for headers',
  UND_ERR_BODY_TIMEOUT: 'request timed out reading the body',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network down',
  UND_ERR_INFO: 'invalid response from the server',
  HPE_INVALID_CONSTANT: 'invalid HTTP response from the server',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'response shorter than its Content-Length',
  CERT_HAS_EXPIRED: 'TLS: certificate has expired',
  CERT_NOT_YET_VALID: 'TLS: certificate is not yet valid',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS: self-signed certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: certificate not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS: certificate not trusted',
  UNABLE_TO_GET_ISSUER_CERT: 'TLS: certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: certificate does not match the host',
  CERT_REVOKED: 'TLS: certificate revoked',
  EPROTO: 'TLS handshake failed',
};

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|ERR_OSSL_)/;

/** The first error code along the cause chain (undici wraps the socket's error once or twice; several addresses give an AggregateError). */
function causeCode(error: unknown): string | null {
  let current = error as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (typeof current.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(current.code)) return current.code;
    current = (current.cause ?? current.errors?.[0]) as typeof current;
  }
  return null;
}
