import { Type } from '@sinclair/typebox';
import { DROP_REASONS, DROP_SAMPLE } from '../../../sources/drops.js';
import { FORMAT_NAMES } from '../../../sources/formats/spec.js';
import { SOURCE_TYPES } from '../../../sources/health.js';
import { UNKNOWN_KEY_CHARS, UNKNOWN_KEY_SAMPLE } from '../../../sources/unknown-keys.js';
import { Timestamp, State, Ok, StringEnum } from '../../schemas.js';

export const StatusResponse = Type.Object(
  {
    ...Ok,
    service: Type.Object({ state: State, message: Type.String() }, { additionalProperties: false }),
    last_check: Type.Union([Timestamp, Type.Null()]),
    last_update: Type.Union([Timestamp, Type.Null()]),
    endpoints: Type.Array(Type.Object({ name: Type.String(), path: Type.String(), state: State }, { additionalProperties: false })),
    store: Type.Object(
      {
        state: State,
        since: Timestamp,
        error: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: false, description: 'The account and usage store: while `down`, rates are served from memory and usage is buffered.' },
    ),
    sources: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          type: StringEnum(SOURCE_TYPES, { description: 'A configured `file`, `http` or `manual` source, or `derived`: the references the config computes by formula (docs/configuration.md#derived-references).' }),
          state: State,
          last_update: Type.Union([Timestamp, Type.Null()], { description: 'When its kept data was updated; for `derived`, the oldest input of the values it computes.' }),
          age_seconds: Type.Union([Type.Integer(), Type.Null()]),
          age_text: Type.String(),
          error: Type.Union([Type.String(), Type.Null()]),
          unknown_keys: Type.Object(
            {
              count: Type.Integer({ minimum: 0, description: 'Items whose key matches no reference (a repeated key counts each time).' }),
              sample: Type.Array(Type.String({ maxLength: UNKNOWN_KEY_CHARS }), {
                maxItems: UNKNOWN_KEY_SAMPLE,
                description: `The first of those keys, in document order: at most ${UNKNOWN_KEY_SAMPLE}, each cut to ${UNKNOWN_KEY_CHARS} characters.`,
              }),
            },
            { additionalProperties: false, description: "Item keys of the source's kept document that no catalogue reference reads: skipped, never served (a misspelt `source_key`, say)." },
          ),
          format: StringEnum([...FORMAT_NAMES, 'formula'], { description: "The shape the source's document is read in (docs/configuration.md#formats); `formula` for the derived source." }),
          mapped: Type.Integer({ minimum: 0, description: 'Items of the latest document read that gave a value for a catalogue reference; for `derived`, the formulas that gave a value.' }),
          dropped: Type.Integer({ minimum: 0, description: 'Items of the latest document read that were dropped: never served.' }),
          dropped_reasons: Type.Array(
            Type.Object(
              {
                reason: StringEnum(DROP_REASONS),
                description: Type.String({ description: 'What the reason means, in English.' }),
                count: Type.Integer({ minimum: 1 }),
                source_keys: Type.Array(Type.String(), {
                  maxItems: DROP_SAMPLE,
                  description: `The first catalogue source keys dropped for it (at most ${DROP_SAMPLE}); a key only the feed names is counted, never named here.`,
                }),
              },
              { additionalProperties: false },
            ),
            { description: 'Why the dropped items were dropped, one entry per reason: a fixed code, never the feed\'s own text.' },
          ),
          derived: Type.Optional(
            Type.Object(
              {
                references: Type.Integer({ minimum: 1, description: 'References the config computes by formula.' }),
                computed: Type.Integer({ minimum: 0, description: 'Of those, the formulas that gave a value in the snapshot served (every input had a value; no division by zero).' }),
                stale_inputs: Type.Array(Type.String(), { description: 'Reference keys some formula reads whose value is served stale: the derived values computed from them are stale too.' }),
                missing_inputs: Type.Array(Type.String(), { description: 'Reference keys some formula reads that have no value: the formulas reading them give none.' }),
              },
              {
                additionalProperties: false,
                description: 'Only on the `derived` source. Its state is `active` when every formula gave a value from fresh inputs, `degraded` when some input is stale or has no value while at least one value is computed, `down` when none is.',
              },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    nodes: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'Host, process id and a random tail.' }),
          role: Type.String({ description: '`all`, `api` or `ingest`.' }),
          leader: Type.Boolean({ description: 'Whether this node is the ingest leader: it reads the sources and publishes every snapshot.' }),
          version: Type.Union([Type.Integer(), Type.Null()], { description: 'The snapshot version the node serves; null before its first.' }),
          last_seen: Timestamp,
        },
        { additionalProperties: false },
      ),
      { description: 'The live processes of this deployment (one without Redis).' },
    ),
    redis: Type.Union([Type.Object({ state: State }, { additionalProperties: false }), Type.Null()], {
      description: 'Redis, which the nodes share limits, snapshots and change notices through; null when the service runs as one process without it. While `down`, each node serves its latest snapshot and limits each key to its share.',
    }),
    history: Type.Object(
      {
        state: State,
        minute_days: Type.Integer({ description: 'Days one-minute candles are kept; hourly and daily candles are kept for good.' }),
        last_written: Type.Union([Timestamp, Type.Null()], { description: 'When the newest value written to the history was served (the close of the newest candle); null before the first.' }),
        recording: Type.Boolean({ description: 'Whether the node that answered records candles (the ingest leader does).' }),
        pending_candles: Type.Integer({ minimum: 0, description: 'Candles the answering node recorded and has not written yet: they wait in memory while the store is away.' }),
      },
      { additionalProperties: false, description: 'Candle recording behind `/v1/rates/{key}/history` and `?at=`: `down` while the store is, `degraded` while no node records.' },
    ),
    stream: Type.Object(
      {
        state: State,
        open_streams: Type.Integer({ minimum: 0, description: 'Push streams open on the node that answered.' }),
      },
      { additionalProperties: false, description: 'The push stream (`/v1/stream`): its state follows the rates it carries.' },
    ),
  },
  { $id: 'StatusResponse', additionalProperties: false },
);
