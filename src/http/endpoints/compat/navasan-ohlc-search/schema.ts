import { Type } from '@sinclair/typebox';
import { PeerDecimal } from '../../../schemas.js';

export const NavasanCandleSchema = Type.Object(
  {
    timestamp: Type.Integer({ description: 'Unix seconds of the day\'s start (local midnight)' }),
    date: Type.String({ description: 'Jalali date of the day, YYYY-MM-DD', examples: ['1405-09-07'] }),
    open: PeerDecimal('Exact, in the item\'s unit'),
    high: PeerDecimal('Exact, in the item\'s unit'),
    low: PeerDecimal('Exact, in the item\'s unit'),
    close: PeerDecimal('Exact, in the item\'s unit'),
  },
  { $id: 'NavasanCandle', additionalProperties: false },
);

export const NavasanOhlcResponse = Type.Array(Type.Ref(NavasanCandleSchema), { $id: 'NavasanOhlcResponse', description: 'Daily candles, oldest first' });
