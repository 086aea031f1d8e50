import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../domain/errors.js';

/** RFC 6750 §3: a 401 names the scheme it wants. */
const CHALLENGE = { 'www-authenticate': 'Bearer realm="metrics"' };

const MISSING = new ApiError('API_KEY_MISSING', 'Send the metrics token as "Authorization: Bearer <token>".', CHALLENGE);
const INVALID = new ApiError('API_KEY_INVALID', 'The metrics token is not valid.', { 'www-authenticate': 'Bearer realm="metrics", error="invalid_token"' });

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * A check of `Authorization: Bearer <token>` against one configured token
 * (NERKH_METRICS_TOKEN), for a scraper rather than a tenant: 401 in the
 * error envelope without it or with another. Digests are compared in
 * constant time, so the answer's timing says nothing about how much of a
 * guess was right.
 */
export function bearerCheck(token: string): (authorization: string | undefined) => void {
  const expected = digest(token);
  return (authorization) => {
    const match = authorization === undefined ? null : /^Bearer +(\S+) *$/i.exec(authorization);
    if (!match) throw MISSING;
    if (!timingSafeEqual(digest(match[1]!), expected)) throw INVALID;
  };
}
