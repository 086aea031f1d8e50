import { Type } from '@sinclair/typebox';
import { Timestamp, Ok } from '../../schemas.js';

export const WebhooksResponse = Type.Object(
  {
    ...Ok,
    account: Type.String(),
    endpoints: Type.Array(
      Type.Object(
        {
          id: Type.String({ examples: ['wh_3f9c2a1b7d4e8f60'] }),
          url: Type.String(),
          state: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
          rules: Type.Array(Type.String(), { description: 'Alert rules as given: `<key><op><number>` or `<key>.change_percent<op><number>`' }),
          events: Type.Array(Type.Union([Type.Literal('stale'), Type.Literal('recovered')])),
          failing_since: Type.Union([Timestamp, Type.Null()], { description: 'The first failed attempt since the last success; null while deliveries succeed' }),
          disabled_reason: Type.Union([Type.String(), Type.Null()]),
          created_at: Timestamp,
          pending: Type.Integer({ minimum: 0, description: 'Deliveries waiting to be sent or retried: at most 1,000 per endpoint' }),
          superseded: Type.Integer({ minimum: 0, description: 'Deliveries replaced before they were delivered by a newer event about the same rule or reference, since the endpoint was added' }),
          dropped: Type.Integer({ minimum: 0, description: 'Deliveries dropped, oldest first, because 1,000 were already waiting, since the endpoint was added' }),
        },
        { additionalProperties: false },
      ),
      { description: "The account's endpoints, oldest first; secrets are never shown" },
    ),
    deliveries: Type.Array(
      Type.Object(
        {
          at: Timestamp,
          endpoint: Type.String(),
          delivery: Type.Union([Type.String(), Type.Null()], { description: 'The delivery id, sent as `webhook-id` with each attempt; null on an endpoint’s own line' }),
          type: Type.Union([Type.Literal('rate.alert'), Type.Literal('rate.stale'), Type.Literal('rate.recovered'), Type.Null()]),
          attempt: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
          status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the endpoint answered; null when it did not answer' }),
          error: Type.Union([Type.String(), Type.Null()]),
          duration_ms: Type.Union([Type.Integer(), Type.Null()]),
          outcome: Type.Union([Type.Literal('delivered'), Type.Literal('retrying'), Type.Literal('given_up'), Type.Literal('disabled'), Type.Literal('superseded'), Type.Literal('dropped')]),
          count: Type.Integer({ minimum: 1, description: 'How many events of this outcome to this endpoint the entry folds (one minute); the other fields are the latest one’s' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The delivery log, newest first: the last 100 entries of 30 days. Events of one outcome to one endpoint within one minute (attempts delivered or retrying, deliveries given up, superseded or dropped, the endpoint disabled) are one entry with a `count`.',
      },
    ),
  },
  { $id: 'WebhooksResponse', additionalProperties: false },
);
