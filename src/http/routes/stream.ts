import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { admit, type AdmissionRecord } from '../../access/admission.js';
import type { KeyAccess } from '../../access/directory.js';
import { ApiError } from '../../domain/errors.js';
import { KEY_PATTERN } from '../../domain/reference.js';
import type { Catalogue } from '../../catalogue/catalogue.js';
import { RETRY_FRAME } from '../../stream/frames.js';
import { StreamHub } from '../../stream/hub.js';
import { MemoryStreamSlots } from '../../stream/slots.js';
import type { AppDeps } from '../deps.js';
import { registerStreamMetrics } from '../metrics.js';
import { errorResponses } from '../schemas.js';
import { redactUrl } from '../url.js';

/** Keys one stream may ask for. */
export const MAX_STREAM_KEYS = 100;

export const StreamQuery = Type.Object(
  {
    keys: Type.Optional(Type.String({ minLength: 1, maxLength: 6_600, description: `Up to ${MAX_STREAM_KEYS} comma-separated reference keys or aliases; none: your whole allowance` })),
    api_key: Type.Optional(Type.String({ maxLength: 200, description: 'Your key, for EventSource (which cannot send headers); never logged' })),
  },
  { additionalProperties: false },
);

/**
 * GET /v1/stream: Server-Sent Events of the caller's rates (PRODUCT §9). The
 * hub is this app's: its streams end in preClose, before the server waits for
 * connections, so open streams never delay a drain.
 */
export async function installStreams(app: FastifyInstance, deps: AppDeps): Promise<StreamHub> {
  const hub = new StreamHub(deps.snapshots, deps.time, deps.stream);
  const slots = deps.streamSlots ?? new MemoryStreamSlots();
  registerStreamMetrics(deps.metrics.registry, () => hub.counts());
  app.addHook('preClose', async () => hub.stop());
  app.addHook('onClose', async () => slots.close());

  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/stream',
    {
      config: { service: 'stream', admitsItself: true },
      // The key may come in the query, so admission runs here, still before validation (PRODUCT §2's order).
      onRequest: async (request, reply) => {
        const query = request.query as { api_key?: unknown };
        const key = request.headers['x-api-key'] ?? (typeof query.api_key === 'string' ? query.api_key : undefined);
        const record: AdmissionRecord = { access: null, headers: [] };
        try {
          const admitted = admit(deps, 'stream', key, request.headers.origin, request.ip, deps.time.now(), record);
          // Only when the shared limiter asks Redis first (rare).
          if (admitted instanceof Promise) await admitted;
        } finally {
          request.access = record.access;
          for (let i = 0; i < record.headers.length; i += 2) reply.header(record.headers[i]!, record.headers[i + 1]);
        }
      },
      schema: {
        tags: ['rates'],
        summary: 'Server-Sent Events: a snapshot of your rates, then the rates that change, once per refresh interval',
        querystring: StreamQuery,
        security: [{ apiKey: [] }],
        response: { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const access = request.access!;
      const keys = selectKeys(deps.catalogue, request.query.keys, access);
      const account = access.account;
      const streamId = randomUUID();
      if (!(await slots.acquire(account.id, streamId, account.plan.max_streams))) {
        throw new ApiError('TOO_MANY_STREAMS', `Your account already holds its plan's ${account.plan.max_streams} open streams; close one first.`);
      }
      // Opening counts as one request, now. A hijacked reply skips Fastify's onResponse hooks, so the
      // access hook never meters it, nor does the app's request log or request metrics: all three happen here.
      deps.meter.record(account.id, access.id, 'stream', deps.time.now(), null);
      request.access = null;
      deps.metrics.observe('/v1/stream', request.method, 200, reply.elapsedTime / 1000);
      request.log.info({ method: request.method, url: redactUrl(request.originalUrl), status: 200, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'stream opened');

      reply.hijack();
      const response = reply.raw;
      // The body ends when the connection does (RFC 9112 §6.3), not with a last chunk: every frame then goes
      // to the socket as the one Buffer the hub built for all its subscribers, with no chunk framing made per
      // write and no cork per socket, so each write leaves during the fan-out, not after it (README, Performance).
      response.useChunkedEncodingByDefault = false;
      response.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // The stream owns its connection: when it ends, so does the socket, and a drain never waits on it.
        connection: 'close',
        'x-accel-buffering': 'no',
      });
      const release = () => slots.release(account.id, streamId);
      if (request.method === 'HEAD') {
        response.end();
        return release();
      }
      const socket = response.socket;
      if (!socket) return release();
      socket.setNoDelay(true);
      // Sends the head with it; everything after goes to the socket itself, in order behind it.
      response.write(RETRY_FRAME);
      // A reconnect with Last-Event-ID gets a fresh snapshot like any new stream: the state, not a replay.
      hub.open(socket, { intervalSeconds: account.plan.refresh_interval_seconds, keys: keys.list, tag: keys.tag }, release);
    },
  );
  return hub;
}

/** The canonical keys a stream follows, in request order, and what streams sharing its frames have in common. */
function selectKeys(catalogue: Catalogue, param: string | undefined, access: KeyAccess): { list: string[]; tag: object | string } {
  const allowance = access.account.allowance;
  if (param === undefined) {
    const list = allowance === null ? catalogue.references.map((reference) => reference.key) : [...allowance];
    return { list, tag: allowance ?? catalogue };
  }
  const names = new Set<string>();
  for (const part of param.split(',')) {
    const name = part.trim();
    if (!KEY_PATTERN.test(name)) {
      throw new ApiError('INVALID_PARAMETER', `Parameter "keys": ${name === '' ? 'holds an empty key' : `invalid key ${JSON.stringify(name.slice(0, 80))}`}; keys are 1-64 letters, digits, "_", "." or "-".`);
    }
    names.add(name.toLowerCase());
  }
  if (names.size > MAX_STREAM_KEYS) throw new ApiError('RATE_KEYS_LIMIT_EXCEEDED', `${names.size} distinct keys requested; a stream takes at most ${MAX_STREAM_KEYS}.`);
  const list: string[] = [];
  let denied = false;
  for (const name of names) {
    const reference = catalogue.lookup(name);
    if (!reference) continue;
    if (allowance !== null && !allowance.has(reference.key)) denied = true;
    else if (!list.includes(reference.key)) list.push(reference.key);
  }
  if (list.length === 0) throw new ApiError(denied ? 'REFERENCE_NOT_IN_PLAN' : 'RATE_NOT_FOUND');
  return { list, tag: list.join(',') };
}
