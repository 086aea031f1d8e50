import { Type } from '@sinclair/typebox';
import { Ok, Exact, RateSchema } from '../../schemas.js';

const ConvertSide = (description: string) => Type.String({ description: `${description}: the canonical reference key, or IRR / IRT` });

export const ConvertResponse = Type.Object(
  {
    ...Ok,
    from: ConvertSide('What the amount counts'),
    to: ConvertSide('What the result counts'),
    amount: Exact('The amount asked, in normal form'),
    result: Exact('amount × price of from ÷ price of to: exact when the quotient terminates, else rounded half-even to 6 decimals'),
    rates: Type.Array(Type.Ref(RateSchema), { description: 'The rates used, as the detail endpoint serves them (in toman with unit=toman); none for IRR and IRT' }),
  },
  { $id: 'ConvertResponse', additionalProperties: false },
);
