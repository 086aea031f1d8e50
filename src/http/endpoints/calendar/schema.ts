import { Type } from '@sinclair/typebox';
import { Ok } from '../../schemas.js';

export const ClosedDaySchema = Type.Object(
  {
    date: Type.String({ description: 'Gregorian date in the market\'s zone, YYYY-MM-DD', examples: ['2027-03-21'] }),
    date_jalali: Type.String({ description: 'Solar Hijri date in the market\'s zone, YYYY/MM/DD', examples: ['1406/01/01'] }),
    reason: Type.String({ description: 'Why it is closed, in English', examples: ['Nowruz'] }),
    reason_fa: Type.String({ description: 'The same in Persian', examples: ['نوروز'] }),
  },
  { $id: 'ClosedDay', additionalProperties: false },
);

export const CalendarResponse = Type.Object(
  {
    ...Ok,
    market: Type.String(),
    from: Type.String({ description: 'First day, YYYY-MM-DD' }),
    to: Type.String({ description: 'Last day, included, YYYY-MM-DD' }),
    closed: Type.Array(Type.Ref(ClosedDaySchema), { description: 'One entry per closed day, in date order' }),
  },
  { $id: 'CalendarResponse', additionalProperties: false },
);
