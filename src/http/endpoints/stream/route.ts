import { randomUUID } from 'node:crypto';
import { ApiError } from '../../../domain/errors.js';
import { metaFrame, RETRY_FRAME } from '../../../stream/frames.js';
import { StreamHub } from '../../../stream/hub.js';
import { MAX_ALERT_RULES } from '../../../domain/alert-rule.js';
import { checkService } from '../../../access/authenticate.js';
import { alertRules, allowedKeys, droppedKeys, MAX_STREAM_KEYS, requestedKeys } from '../../../stream/selection.js';
import { MemoryStreamSlots } from '../../../stream/slots.js';
import type { StreamSlots } from '../../../stream/slots.js';
import { StreamWatch } from '../../../stream/watch.js';
import type { AppDeps } from '../../deps.js';
import { registerStreamMetrics } from '../../metrics.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule, type EndpointContext } from '../module.js';
import { UNIT } from '../unit-param.js';

/** The app's push streams: the hub that writes every event, the watch that holds each stream to its key, the slots that count them per account. */
export interface Streams {
  hub: StreamHub;
  watch: StreamWatch;
  slots: StreamSlots;
}

export function appStreams(context: EndpointContext): Streams {
  return context.shared(createStreams);
}

/**
 * The streams live and die with the app: they end in preClose, before the
 * server waits for connections, so open streams never delay a drain.
 */
function createStreams(context: EndpointContext): Streams {
  const { deps } = context;
  const hub = new StreamHub(deps.snapshots, deps.time, deps.stream);
  const streams = { hub, watch: new StreamWatch(hub, deps.directory, deps.catalogue, deps.time), slots: deps.streamSlots ?? new MemoryStreamSlots() };
  registerStreamMetrics(deps.metrics.registry, () => streams.hub.counts(), () => streams.watch.counts());
  context.preClose(() => {
    streams.watch.stop();
    streams.hub.stop();
  });
  context.onClose(() => streams.slots.close());
  return streams;
}

const query = queryParams({
  keys: { type: 'string', minLength: 1, maxLength: 6_600, description: `Up to ${MAX_STREAM_KEYS} comma-separated reference keys or aliases; none: your whole allowance` },
  api_key: { type: 'string', maxLength: 200, description: 'Your key, for EventSource (which cannot send headers); never logged' },
  unit: UNIT,
  alerts: {
    type: 'string',
    // Room for every rule at its longest (120 characters) and the separators; a 21st rule is refused by name.
    maxLength: 4_000,
    description:
      `Up to ${MAX_ALERT_RULES} alert rules, separated by ";": \`<key><op><number>\` or \`<key>.change_percent<op><number>\`, op one of > >= < <=. ` +
      'An `alert` event is sent when a rule becomes true (also when it is true at the first snapshot), and not again until it has been false. ' +
      'Needs the `alerts` service; each key must be one the stream follows. Thresholds are in the stream\'s unit.',
    examples: ['usd_free>=1100000;gold_18k.change_percent<=-2'],
  },
});

/** `GET /v1/stream`: Server-Sent Events of the caller's rates (docs/api.md#push-stream). */
export function streamEndpoint(deps: Pick<AppDeps, 'catalogue' | 'logger'>, { watch, slots }: Streams): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/stream',
    service: 'stream',
    // The key may come in the query, as browsers' EventSource sends no headers.
    keyParam: 'api_key',
    query,
    doc: {
      tags: ['rates'],
      summary: 'Server-Sent Events: a snapshot of your rates, then the rates that change, once per refresh interval',
      description:
        'Events: `meta` (only when `keys` named something the stream leaves out; first, once: `{unknown_keys, denied_keys}` as in the detail answer\'s `meta`), ' +
        '`snapshot` (every followed rate; first, and again when a plan change alters what the stream reads or how often), then `rates` (only those that changed). ' +
        'The stream ends with `error` (data: the error envelope) when its key is revoked or expires, its account is suspended, or its plan no longer includes the stream or any of its references, ' +
        "and with `reconnect` when it reaches the plan's `max_stream_seconds` (reconnect for a new one). " +
        'With `alerts`, `alert` events (data: `{rule, key, value, change_percent, at}`) follow the snapshot or `rates` event in which a rule became true.',
      ok: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      conditional: false,
      errors: [400, 401, 403, 404, 429],
    },
    answer: 'stream',
    open: async (exchange, access, params) => {
      // Service before validation (docs/api.md#errors): a plan without alerts hears that, whatever the rules say.
      if (params.alerts !== undefined) checkService(access, 'alerts');
      const requested = requestedKeys(deps.catalogue, params.keys);
      const keys = allowedKeys(deps.catalogue, requested, access);
      const alerts = params.alerts === undefined ? [] : alertRules(deps.catalogue, params.alerts, keys, access);
      const account = access.account;
      const streamId = randomUUID();
      // Not "already holds 0 streams": none may ever be held, so say which field allows them.
      if (account.plan.max_streams === 0) {
        throw new ApiError(
          'TOO_MANY_STREAMS',
          `Your plan allows no streams: plan "${account.plan.name}" has max_streams 0. Set max_streams in the config file (plans.${account.plan.name}.max_streams), or for this account with \`nerkh accounts set ${account.username} --max-streams <n>\`.`,
        );
      }
      if (!(await slots.acquire(account.id, streamId, account.plan.max_streams))) {
        throw new ApiError('TOO_MANY_STREAMS', `Your account already holds its plan's ${account.plan.max_streams} open streams; close one first.`);
      }
      const release = () => slots.release(account.id, streamId);
      return {
        start(response, headers) {
          // The body ends when the connection does (RFC 9112 §6.3), not with a last chunk: every frame then goes
          // to the socket as the one Buffer the hub built for all its subscribers, with no chunk framing made per
          // write and no cork per socket, so each write leaves during the fan-out, not after it (docs/performance.md).
          response.useChunkedEncodingByDefault = false;
          // The stream owns its connection: when it ends, so does the socket, and a drain never waits on it.
          headers.push('content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-store', 'connection', 'close', 'x-accel-buffering', 'no');
          response.writeHead(200, headers);
          if (exchange.method === 'HEAD') {
            response.end();
            return release();
          }
          const socket = response.socket;
          if (!socket) return release();
          socket.setNoDelay(true);
          // What `keys` named that the stream leaves out, once, before the snapshot: written to this stream
          // alone, as the events after it are shared by every stream following the same references.
          const dropped = droppedKeys(deps.catalogue, params.keys, access);
          // Sends the head with it; everything after goes to the socket itself, in order behind it.
          response.write(dropped ? Buffer.concat([RETRY_FRAME, metaFrame(dropped.unknown, dropped.denied)]) : RETRY_FRAME);
          // A reconnect with Last-Event-ID gets a fresh snapshot like any new stream: the state, not a replay.
          // From here the watch holds the stream to its key's access: revoked, suspended, or a plan that no longer allows it ends it.
          const log = deps.logger.child({ reqId: exchange.requestId });
          watch.open(socket, { access, requested, unit: params.unit, alerts, origin: exchange.origin, requestId: exchange.requestId, log }, keys, release);
        },
      };
    },
  });
}

export const endpoint = endpointModule({
  build: (context) => streamEndpoint(context.deps, appStreams(context)),
  examples: { '/v1/stream': () => '/v1/stream?keys=usd_free' },
});
