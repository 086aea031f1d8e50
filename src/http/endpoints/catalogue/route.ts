import { CATEGORIES } from '../../../domain/reference.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { CatalogueResponse, ReferenceSchema } from './schema.js';
import { CatalogueRenderer } from './render.js';

export const MAX_SEARCH_LENGTH = 100;

const query = queryParams({
  category: { type: 'enum', values: CATEGORIES },
  q: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_SEARCH_LENGTH,
    description:
      'Searches key, aliases, title and title_en, case-insensitively; Arabic ي/ك match Persian ی/ک, Persian digits match ASCII, and spaces, the zero-width non-joiner, _ and - are ignored. Every word must match; best matches first (key or alias, whole title, prefix, phrase, words), the more popular first within each',
  },
  in_plan: { type: 'boolean', description: "true: only references inside the key's allowance; false: only those outside it" },
});

/**
 * `GET /v1/rates`: the listing for the caller's allowance and filters,
 * prepared once per allowance and filter; a request adds the envelope's time.
 */
export function catalogueEndpoint(renderer: CatalogueRenderer): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/rates',
    service: 'catalogue',
    raw: true,
    query,
    doc: { tags: ['rates'], summary: 'Catalogue of active references (no prices)', ok: CatalogueResponse, conditional: true, errors: [400, 401, 403, 429] },
    answer: 'prepared',
    prepare: (_exchange, account, params) =>
      renderer.prepare(account.allowance, params === query.none ? undefined : { category: params.category, q: params.q, inPlan: params.in_plan }),
  });
}

export const endpoint = endpointModule({
  schemas: [ReferenceSchema, CatalogueResponse],
  build: ({ deps }) => catalogueEndpoint(new CatalogueRenderer(deps.catalogue)),
  examples: { '/v1/rates': () => '/v1/rates' },
});
