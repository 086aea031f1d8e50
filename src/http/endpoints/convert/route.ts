import { KEY_PATTERN } from '../../../domain/reference.js';
import { assertOneCurrency, renderConvert } from './render.js';
import { priceSide, resolveSide } from '../../../render/priced-side.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { ConvertResponse } from './schema.js';
import { fromPlanSnapshot } from '../plan-snapshot.js';
import { UNIT } from '../unit-param.js';

const side = (description: string, example: string) =>
  ({ type: 'string', pattern: KEY_PATTERN, required: true, description: `${description}: a reference key or alias, IRR (rial) or IRT (toman)`, examples: [example] }) as const;

const query = queryParams({
  from: side('What the amount counts', 'gold_18k'),
  to: side('What to count it in', 'IRT'),
  amount: {
    type: 'decimal',
    maximum: '999999999999999.99999999',
    fractionDigits: 8,
    positive: true,
    required: true,
    description: 'How many of `from` (grams, coins, dollars… as its `per` says): a plain decimal above 0, at most 15 digits before the point and 8 after',
    examples: ['3.5'],
  },
  unit: UNIT,
});

/** `GET /v1/convert`: an amount of one thing in units of another priced in the same currency (service `detail`). */
export function convertEndpoint(deps: Pick<AppDeps, 'snapshots' | 'catalogue' | 'time'>): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/convert',
    service: 'detail',
    query,
    doc: {
      tags: ['rates'],
      summary: 'Convert an amount between two references, rial or toman',
      description:
        'result = amount × price of `from` ÷ price of `to`, both prices in one currency (IRR and IRT count as one: a toman is 10 rials), from the rates the detail endpoint serves now. Exact when the quotient terminates, else rounded half-even to 6 decimals.',
      ok: ConvertResponse,
      conditional: true,
      errors: [400, 401, 403, 404, 429, 503],
    },
    answer: 'rendered',
    render: fromPlanSnapshot(deps, (snapshot, account, params, generatedAt) => {
      const from = resolveSide('from', params.from, deps.catalogue, account.allowance);
      const to = resolveSide('to', params.to, deps.catalogue, account.allowance);
      assertOneCurrency(from, to);
      return renderConvert(priceSide(from, snapshot, params.unit), priceSide(to, snapshot, params.unit), params.amount, generatedAt);
    }),
  });
}

export const endpoint = endpointModule({
  schemas: [ConvertResponse],
  build: ({ deps }) => convertEndpoint(deps),
  examples: { '/v1/convert': () => '/v1/convert?from=usd_free&to=IRT&amount=2.5' },
});
