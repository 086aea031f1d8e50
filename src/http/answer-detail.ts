import { ApiError } from '../domain/errors.js';
import type { AppDeps } from './deps.js';
import { answerKeyed, type KeyedAnswer, type KeyedDeps, type KeyedRequest } from './answer-keyed.js';
import { parseDetailQuery, PLAIN_DETAIL_QUERY } from './query.js';

export const DETAIL_PREFIX = '/v1/rates/';

export type DetailDeps = KeyedDeps & Pick<AppDeps, 'detailRenderer' | 'snapshots'>;

/**
 * `GET /v1/rates/{keys}`, framework-free (see answerKeyed): after admission,
 * the query (`unit`, `expand`) and the keys segment, then resolution against
 * the snapshot the caller's refresh interval shows.
 */
export function answerDetail(deps: DetailDeps, request: KeyedRequest): KeyedAnswer | Promise<KeyedAnswer> {
  return answerKeyed(deps, 'detail', request, (account) => {
    const query = request.query === null ? PLAIN_DETAIL_QUERY : parseDetailQuery(request.query);
    const snapshot = deps.snapshots.forInterval(account.plan.refresh_interval_seconds, request.now);
    return deps.detailRenderer.prepare(snapshot, keysSegment(request.path), account.allowance, query.unit, query.sources);
  });
}

/** The keys segment, percent-decoded; a segment that cannot be decoded is INVALID_KEYS (after admission, like any other bad segment). */
function keysSegment(path: string): string {
  const segment = path.slice(DETAIL_PREFIX.length);
  if (segment.indexOf('%') === -1) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiError('INVALID_KEYS', 'The keys segment is not validly percent-encoded.');
  }
}
