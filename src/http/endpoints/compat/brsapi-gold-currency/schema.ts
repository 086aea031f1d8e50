import { Type } from '@sinclair/typebox';

export const BrsapiItemSchema = Type.Object(
  {
    date: Type.String({ description: 'Jalali date of the update, YYYY/MM/DD', examples: ['1405/09/07'] }),
    time: Type.String({ description: 'Tehran time of the update, HH:MM', examples: ['16:29'] }),
    time_unix: Type.Integer({ description: 'Unix seconds of the update' }),
    symbol: Type.String(),
    name_en: Type.String(),
    name: Type.String(),
    price: Type.Number({ description: 'Exact, written from the decimal (never through a float): toman, or dollars' }),
    change_value: Type.Union([Type.Number(), Type.Null()], { description: 'Change since the previous close in the same unit, exact; null when not known' }),
    change_percent: Type.Union([Type.Number(), Type.Null()], { description: 'Change in percent of the previous close, two decimals; null when not known' }),
    unit: Type.Union([Type.Literal('تومان'), Type.Literal('دلار')]),
  },
  { $id: 'BrsapiItem', additionalProperties: false },
);

export const BrsapiMarketResponse = Type.Object(
  { gold: Type.Array(Type.Ref(BrsapiItemSchema)), currency: Type.Array(Type.Ref(BrsapiItemSchema)), cryptocurrency: Type.Array(Type.Ref(BrsapiItemSchema)) },
  { $id: 'BrsapiMarketResponse', additionalProperties: false },
);
