import { Type } from '@sinclair/typebox';
import { Timestamp, Ok } from '../../schemas.js';

export const UsageResponse = Type.Object(
  {
    ...Ok,
    account: Type.String(),
    plan: Type.String(),
    daily: Type.Array(Type.Object({ date: Type.String(), requests: Type.Integer(), errors: Type.Integer() }, { additionalProperties: false })),
    services: Type.Array(Type.Object({ service: Type.String(), requests: Type.Integer(), share: Type.Number() }, { additionalProperties: false })),
    errors: Type.Array(
      Type.Object(
        {
          at: Timestamp,
          service: Type.String(),
          path: Type.String({ description: 'The path and query of the latest failure in the entry' }),
          http_status: Type.Integer(),
          error: Type.String(),
          count: Type.Integer({ minimum: 1, description: 'How many failures the entry folds' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The error log, newest first: the last 1,000 entries or 30 days. Repeats of one error on one service within one minute are one entry with a `count`; `at`, `path` and `http_status` are those of the latest.',
      },
    ),
  },
  { $id: 'UsageResponse', additionalProperties: false },
);
