import type { AppDeps } from './deps.js';
import { answerKeyed, type KeyedAnswer, type KeyedDeps, type KeyedRequest } from './answer-keyed.js';
import { parseCatalogueQuery } from './query.js';

export const CATALOGUE_PATH = '/v1/rates';

export type CatalogueDeps = KeyedDeps & Pick<AppDeps, 'catalogueRenderer'>;

/**
 * `GET /v1/rates`, framework-free (see answerKeyed): the listing for the
 * caller's allowance and filters (`category`, `q`, `in_plan`), prepared once
 * per allowance and filter; a request adds the envelope's time.
 */
export function answerCatalogue(deps: CatalogueDeps, request: KeyedRequest): KeyedAnswer | Promise<KeyedAnswer> {
  return answerKeyed(deps, 'catalogue', request, (account) =>
    deps.catalogueRenderer.prepare(account.allowance, request.query === null ? undefined : parseCatalogueQuery(request.query)),
  );
}
