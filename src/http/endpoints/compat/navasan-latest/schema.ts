import { Type } from '@sinclair/typebox';
import { PeerDecimal } from '../../../schemas.js';

export const NavasanItemSchema = Type.Object(
  {
    value: PeerDecimal("The price in navasan's unit (toman; thousands of toman for coins and melted gold; dollars for world prices), exact"),
    change: Type.Union([Type.Number(), Type.Null()], { description: 'Change since the previous close, in the same unit, exact; null when not known' }),
    timestamp: Type.Integer({ description: 'Unix seconds of the value\'s update' }),
    date: Type.String({ description: 'Jalali date and Tehran time of the update, YYYY-MM-DD HH:MM:SS', examples: ['1405-09-07 16:29:03'] }),
  },
  { $id: 'NavasanItem', additionalProperties: false },
);

export const NavasanLatestResponse = Type.Object({}, { $id: 'NavasanLatestResponse', additionalProperties: Type.Ref(NavasanItemSchema), description: 'One property per navasan item served' });
