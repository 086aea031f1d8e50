import { Type } from '@sinclair/typebox';
import { Ok, Exact, RateSchema } from '../../schemas.js';

export const JewelleryResponse = Type.Object(
  {
    ...Ok,
    weight: Exact('Grams, as asked'),
    karat: Type.Union([Type.Literal(18), Type.Literal(21), Type.Literal(22), Type.Literal(24)]),
    making_percent: Exact('Making charge, percent'),
    profit_percent: Exact('Profit, percent'),
    vat_percent: Exact('VAT, percent'),
    currency: Type.Union([Type.Literal('IRR'), Type.Literal('IRT')], { description: 'IRT with unit=toman' }),
    gram_price: Exact('The gram price of the karat used, in currency'),
    gold: Exact('weight × gram_price, exact'),
    making: Exact('gold × making_percent ÷ 100, exact'),
    profit: Exact('(gold + making) × profit_percent ÷ 100, exact'),
    vat: Exact('(making + profit) × vat_percent ÷ 100, exact'),
    total: Type.Integer({ description: 'gold + making + profit + vat, rounded half up to a whole rial (or toman)' }),
    rates: Type.Array(Type.Ref(RateSchema), { description: 'The gram price used, as the detail endpoint serves it' }),
  },
  { $id: 'JewelleryResponse', additionalProperties: false },
);
