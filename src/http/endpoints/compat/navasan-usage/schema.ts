import { Type } from '@sinclair/typebox';

export const NavasanUsageResponse = Type.Object(
  {
    monthly_usage: Type.Integer({ description: 'Requests of your account this calendar month, in the service\'s zone' }),
    daily_usage: Type.Integer({ description: 'Requests of your account today (the day /v1/usage counts under)' }),
    hourly_usage: Type.Integer({ description: 'Requests of your account this hour' }),
  },
  { $id: 'NavasanUsageResponse', additionalProperties: false },
);
