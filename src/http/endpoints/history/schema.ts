import { Type } from '@sinclair/typebox';
import { INTERVALS } from '../../../history/ranges/buckets.js';
import { Currency, Ok, Per, Timestamp } from '../../schemas.js';

export const CandleSchema = Type.Object(
  {
    t: Timestamp,
    t_jalali: Type.String({ description: 'Candle start in the Solar Hijri calendar, YYYY/MM/DD HH:MM:SS', examples: ['1405/08/30 14:00:00'] }),
    open: Type.Number(),
    high: Type.Number(),
    low: Type.Number(),
    close: Type.Number(),
    points: Type.Integer({ description: 'Values served in the candle (0 for imported daily candles)' }),
  },
  { $id: 'Candle', additionalProperties: false },
);

export const HistoryResponse = Type.Object(
  {
    ...Ok,
    key: Type.String(),
    title: Type.String(),
    unit: Type.String({ description: 'Persian label of the candle values (تومان/… with ?unit=toman)' }),
    currency: Currency(),
    per: Per,
    interval: Type.Union(INTERVALS.map((interval) => Type.Literal(interval))),
    from: Timestamp,
    to: Timestamp,
    count: Type.Integer(),
    candles: Type.Array(Type.Ref(CandleSchema), { description: 'Oldest first; intervals with no value served are absent' }),
  },
  { $id: 'HistoryResponse', additionalProperties: false },
);
