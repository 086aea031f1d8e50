import { DEFAULT_KARAT, DEFAULT_PROFIT_PERCENT, DEFAULT_VAT_PERCENT, KARATS } from '../../../domain/jewellery.js';
import { KARAT_REFERENCES, renderJewellery } from './render.js';
import { pricedSide } from '../../../render/priced-side.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams, type ParamSpec } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { JewelleryResponse } from './schema.js';
import { fromPlanSnapshot } from '../plan-snapshot.js';
import { UNIT } from '../unit-param.js';

const percent = (description: string, fallback?: string) =>
  ({
    type: 'decimal',
    maximum: '100',
    fractionDigits: 4,
    ...(fallback === undefined ? { required: true } : { default: fallback }),
    description: `${description}. A plain decimal from 0 to 100 with at most 4 decimals`,
  }) as const satisfies ParamSpec;

const query = queryParams({
  weight: {
    type: 'decimal',
    maximum: '999999.9999',
    fractionDigits: 4,
    positive: true,
    required: true,
    description: 'Weight of the piece in grams: a plain decimal above 0, at most 6 digits before the point and 4 after',
    examples: ['3.5'],
  },
  karat: { type: 'enum', values: KARATS, default: DEFAULT_KARAT, description: 'Fineness: its gram price is the reference gold_18k, gold_21k, gold_22k or gold_24k' },
  making_percent: percent('Making charge (ojrat), percent of the gold; required, as it differs from piece to piece'),
  profit_percent: percent("The shop's profit, percent of gold + making", DEFAULT_PROFIT_PERCENT),
  vat_percent: percent('VAT, percent of making + profit (never of the gold)', DEFAULT_VAT_PERCENT),
  unit: UNIT,
});

/** `GET /v1/jewellery`: the customary Iranian price of a gold piece from the current gram price (service `detail`). */
export function jewelleryEndpoint(deps: Pick<AppDeps, 'snapshots' | 'catalogue' | 'time'>): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/jewellery',
    service: 'detail',
    query,
    doc: {
      tags: ['rates'],
      summary: 'Price of a gold piece: gold, making, profit and VAT',
      description:
        'gold = weight × gram price of the karat, making = gold × making%, profit = (gold + making) × profit%, vat = (making + profit) × vat%, total = gold + making + profit + vat. Each line exact; only the total is rounded, half up, to a whole rial (or toman with unit=toman).',
      ok: JewelleryResponse,
      conditional: true,
      errors: [400, 401, 403, 404, 429, 503],
    },
    answer: 'rendered',
    render: fromPlanSnapshot(deps, (snapshot, account, params, generatedAt) => {
      const gram = pricedSide('karat', KARAT_REFERENCES[params.karat], deps.catalogue, snapshot, account.allowance, params.unit);
      return renderJewellery(
        { weight: params.weight, karat: params.karat, makingPercent: params.making_percent, profitPercent: params.profit_percent, vatPercent: params.vat_percent, unit: params.unit },
        gram,
        generatedAt,
      );
    }),
  });
}

export const endpoint = endpointModule({
  schemas: [JewelleryResponse],
  build: ({ deps }) => jewelleryEndpoint(deps),
  examples: { '/v1/jewellery': () => '/v1/jewellery?weight=3.5&making_percent=18' },
});
