import { ApiError } from '../../../domain/errors.js';
import { secondsToBoundary } from '../../conditional.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { WebserviceResponse, WebserviceEntrySchema } from './schema.js';
import { UNIT } from '../unit-param.js';
import { WebserviceRenderer } from './render.js';

/** The same answer for a stranger's username and one that does not exist (or cannot be read). */
const NOT_THIS_ACCOUNT = new ApiError('SERVICE_NOT_ACTIVE', 'This feed is not available to this API key.');

/**
 * `GET /webservice/{username}`: the flat webservice list of the account's
 * allowance, for old rate boards. Boards poll it all day, so a plain URL is
 * answered on the raw path like detail and the catalogue (pipeline/raw.ts).
 */
export function webserviceEndpoint(deps: Pick<AppDeps, 'time' | 'snapshots'>, renderer: WebserviceRenderer): KeyedEndpoint {
  return keyedEndpoint({
    path: '/webservice/:username',
    service: 'webservice',
    raw: true,
    query: queryParams({ unit: UNIT }),
    pathParam: { name: 'username', description: 'The account the key belongs to', invalid: NOT_THIS_ACCOUNT },
    doc: { tags: ['webservice'], summary: 'Webservice per-user feed (flat shape, Jalali dates)', ok: WebserviceResponse, conditional: true, errors: [401, 403, 429] },
    answer: 'rendered',
    render: (exchange, account, params, username) => {
      if (username !== account.username) throw NOT_THIS_ACCOUNT;
      const now = exchange.now;
      const snapshot = deps.snapshots.forInterval(account.plan.refresh_interval_seconds, now);
      return renderer.render(snapshot, account.allowance, deps.time.format(now), now, params.unit, secondsToBoundary(account.plan.refresh_interval_seconds, now));
    },
  });
}

export const endpoint = endpointModule({
  schemas: [WebserviceEntrySchema, WebserviceResponse],
  build: ({ deps }) => webserviceEndpoint(deps, new WebserviceRenderer(deps.catalogue)),
  examples: { '/webservice/:username': (username) => `/webservice/${username}` },
});
