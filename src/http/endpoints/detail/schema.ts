import { Type } from '@sinclair/typebox';
import { Ok, RateSchema } from '../../schemas.js';

export const DetailResponse = Type.Object(
  {
    ...Ok,
    count: Type.Integer(),
    rates: Type.Array(Type.Ref(RateSchema)),
    meta: Type.Object(
      {
        max_keys: Type.Literal(10),
        includes_prices: Type.Literal(true),
        unknown_keys: Type.Array(Type.String()),
        denied_keys: Type.Array(Type.String()),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'DetailResponse', additionalProperties: false },
);
