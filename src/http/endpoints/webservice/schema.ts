import { Type } from '@sinclair/typebox';
import { Timestamp, Ok, Per, Currency, MarketSchema } from '../../schemas.js';

export const WebserviceEntrySchema = Type.Object(
  {
    title: Type.String(),
    value: Type.Union([Type.Number(), Type.Null()]),
    unit: Type.String(),
    currency: Currency(),
    per: Per,
    updated_at: Type.Union([Timestamp, Type.Null()]),
    date_jalali: Type.Union([Type.String({ description: 'Solar Hijri date, YYYY/MM/DD' }), Type.Null()]),
    change: Type.Union([Type.Number(), Type.Null()], { description: 'value − previous day close, exactly; null when not known' }),
    change_percent: Type.Union([Type.Number(), Type.Null()], { description: 'change in percent of the previous close, two decimals; null when not known' }),
    status: Type.Union([Type.Literal('ok'), Type.Literal('stale'), Type.Literal('unavailable')]),
    stale_seconds: Type.Union([Type.Integer(), Type.Null()], { description: 'Age of a stale value in seconds; null while fresh' }),
    market: Type.Union([Type.Ref(MarketSchema), Type.Null()], { description: 'Its market; null for a reference no market takes' }),
  },
  { $id: 'WebserviceEntry', additionalProperties: false },
);

export const WebserviceResponse = Type.Object(
  { ...Ok, server_time: Type.Integer({ description: 'Unix seconds' }) },
  { $id: 'WebserviceResponse', additionalProperties: Type.Ref(WebserviceEntrySchema), description: 'Flat webservice shape: one property per allowed reference key' },
);
