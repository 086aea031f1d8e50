import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { NerkhError, readBody } from './errors.js';
import { metaOf, type ResponseMeta } from './meta.js';
import { retryDelay, sleep, type RetryPolicy } from './retry.js';
import type { QueryOf, Rate } from './types.js';

/** Query options the server documents for the stream besides `keys` (the key itself goes in a header). */
type StreamQuery = Omit<QueryOf<'getStream'>, 'keys' | 'api_key' | 'alerts'>;

export type StreamOptions = StreamQuery & {
  /** Keys or aliases to follow (at most 100); none: your whole allowance. */
  keys?: string | readonly string[];
  /**
   * Alert rules (at most 20; needs the `alerts` service): `usd_free>=1100000`,
   * `gold_18k.change_percent<=-2`, as an array or one `;`-separated string.
   * Each rule's key must be one the stream follows; thresholds are in `unit`.
   */
  alerts?: string | readonly string[];
  /** Aborting it ends the iteration (the loop simply finishes). */
  signal?: AbortSignal;
  /** Resume after an event you already hold (sent as Last-Event-ID). */
  lastEventId?: string;
  /** Consecutive failed reconnects before the iterator throws (default: never give up once connected). */
  maxReconnectAttempts?: number;
  /** A connection silent for this long is taken for dead and replaced (default 45 000 ms: three missed pings). */
  idleTimeoutMs?: number;
  /** Called on every (re)connection with the answer's headers (rate limits, request id). */
  onOpen?: (meta: ResponseMeta) => void;
};

/** `data` of both events: the moment, and every requested rate (snapshot) or the ones that changed (rates). */
export interface StreamPayload {
  generated_at: string;
  rates: Rate[];
}

export interface StreamEvent {
  type: 'snapshot' | 'rates';
  /** The snapshot version: increases across restarts and nodes. */
  id: string | null;
  data: StreamPayload;
}

/** `data` of an `alert` event: a rule that became true, and the rate as the stream showed it then. */
export interface StreamAlert {
  /** The rule as you wrote it. */
  rule: string;
  /** The reference's canonical key (an alias in the rule is resolved). */
  key: string;
  value: Rate['value'];
  change_percent: Rate['change_percent'];
  /** When that value was set (the rate's `updated_at`). */
  at: string | null;
}

/**
 * A rule of `alerts` became true: sent right after the `snapshot` or `rates`
 * event that made it so, once, and again only after the rule has been false.
 * A reconnect is a new stream: a rule true at its snapshot fires again.
 */
export interface StreamAlertEvent {
  type: 'alert';
  /** Alerts carry no id: Last-Event-ID stays the snapshot version. */
  id: null;
  data: StreamAlert;
}

/** What a stream opened with `alerts` yields. */
export type AlertingStreamEvent = StreamEvent | StreamAlertEvent;

export interface StreamContext {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: (request: Request) => Promise<Response>;
  retry: RetryPolicy;
}

/** Until the server says otherwise in `retry:` (it sends 3000). */
const DEFAULT_RECONNECT_MS = 3000;

/**
 * GET /v1/stream as an async iterable. A dropped connection (network,
 * server restart, idle) is reopened after the server's `retry` delay with
 * Last-Event-ID; the server answers a reconnect with a fresh snapshot. An
 * error answer (401, 403, 404, 429 without a short Retry-After) ends the
 * iteration with a NerkhError.
 */
export class RateStream<Event extends AlertingStreamEvent = StreamEvent> implements AsyncIterable<Event> {
  /** The id of the last event received, sent as Last-Event-ID on reconnect. */
  lastEventId: string | null;
  /** The reconnect delay in force (the server's `retry:`). */
  retryMs = DEFAULT_RECONNECT_MS;
  /** Connections opened so far (1 + reconnects). */
  connections = 0;
  private started = false;

  constructor(
    private readonly context: StreamContext,
    private readonly options: StreamOptions,
  ) {
    this.lastEventId = options.lastEventId ?? null;
  }

  [Symbol.asyncIterator](): AsyncIterator<Event> {
    if (this.started) throw new Error('A stream can be iterated once; call client.stream() again for another.');
    this.started = true;
    return this.events();
  }

  private async *events(): AsyncGenerator<Event> {
    const signal = this.options.signal;
    let failures = 0;
    while (!signal?.aborted) {
      const connection = new AbortController();
      const abort = () => connection.abort(signal?.reason);
      signal?.addEventListener('abort', abort, { once: true });
      try {
        let response: Response;
        try {
          response = await this.context.fetch(this.request(connection.signal));
        } catch (cause) {
          if (signal?.aborted) return;
          // Never connected: say so at once rather than retry a wrong address forever.
          if (this.connections === 0) throw NerkhError.network(cause);
          failures = await this.pause(failures, null, signal);
          continue;
        }
        if (!response.ok || !response.body) {
          const error = NerkhError.fromResponse(response, await readBody(response));
          failures = await this.pause(failures, error, signal);
          continue;
        }
        this.connections++;
        failures = 0;
        this.options.onOpen?.(metaOf(response));
        yield* this.read(response.body, connection);
      } finally {
        signal?.removeEventListener('abort', abort);
        connection.abort();
      }
      if (signal?.aborted) return;
      await sleep(this.retryMs, signal).catch(() => undefined);
    }
  }

  private request(signal: AbortSignal): Request {
    const { keys, alerts, signal: _signal, lastEventId: _lastEventId, maxReconnectAttempts: _attempts, idleTimeoutMs: _idle, onOpen: _onOpen, ...rest } = this.options;
    const params = new URLSearchParams(Object.entries(rest as Record<string, unknown>).filter(([, value]) => value !== undefined).map(([name, value]) => [name, String(value)]));
    if (keys !== undefined) params.set('keys', typeof keys === 'string' ? keys : keys.join(','));
    if (alerts !== undefined) params.set('alerts', typeof alerts === 'string' ? alerts : alerts.join(';'));
    // A string, not a URL object: a browser page may give a relative baseUrl ('' or '/api').
    const query = params.toString() === '' ? '' : `?${params}`;
    const url = `${this.context.baseUrl.replace(/\/+$/, '')}/v1/stream${query}`;
    const headers: Record<string, string> = { ...this.context.headers, accept: 'text/event-stream', 'cache-control': 'no-cache' };
    if (this.lastEventId !== null) headers['last-event-id'] = this.lastEventId;
    return new Request(url, { headers, signal });
  }

  /** Events of one connection, until it ends, fails or falls silent. */
  private async *read(body: ReadableStream<Uint8Array>, connection: AbortController): AsyncGenerator<Event> {
    const received: EventSourceMessage[] = [];
    const parser = createParser({
      onEvent: (event) => received.push(event),
      onRetry: (ms) => (this.retryMs = ms),
    });
    const idleMs = this.options.idleTimeoutMs ?? 45_000;
    let idle = setTimeout(() => connection.abort(), idleMs);
    const reader = body.getReader();
    // An abort (the caller's signal or the idle timer) cancels the body here, itself: the link a fetch
    // keeps from the request's signal to its body may be held weakly (Node's fetch holds it through a
    // WeakRef) and be gone after a garbage collection, leaving the connection open and its events coming.
    const cancel = () => void reader.cancel(connection.signal.reason).catch(() => undefined);
    connection.signal.addEventListener('abort', cancel, { once: true });
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (chunk.done) return;
        clearTimeout(idle);
        idle = setTimeout(() => connection.abort(), idleMs);
        parser.feed(decoder.decode(chunk.value, { stream: true }));
        while (received.length > 0) {
          const message = received.shift()!;
          // Events this version does not know are skipped, so a newer server never breaks an older client.
          if (message.event === 'alert') {
            // Only a stream opened with `alerts` is sent these, so Event includes them then.
            yield { type: 'alert', id: null, data: JSON.parse(message.data) as StreamAlert } as Event;
            continue;
          }
          if (message.event !== 'snapshot' && message.event !== 'rates') continue;
          if (message.id !== undefined) this.lastEventId = message.id;
          yield { type: message.event, id: message.id ?? null, data: JSON.parse(message.data) as StreamPayload } as Event;
        }
      }
    } finally {
      connection.signal.removeEventListener('abort', cancel);
      clearTimeout(idle);
      reader.cancel().catch(() => undefined);
    }
  }

  /**
   * Wait before the next attempt after a failed one, or throw when it is
   * final. Before the first connection the client's retry policy applies
   * (429/503 within the Retry-After bound). Once connected, a 429 or 5xx is
   * waited out like a network failure (a restart behind a proxy), for the
   * longer of its Retry-After and the stream's retry delay; other errors end
   * the iteration.
   */
  private async pause(failures: number, error: NerkhError | null, signal: AbortSignal | undefined): Promise<number> {
    let wait = this.retryMs;
    if (error && this.connections === 0) {
      const delay = retryDelay(error, failures, this.context.retry);
      if (delay === null) throw error;
      wait = delay;
    } else if (error) {
      const after = (error.retryAfter ?? 0) * 1000;
      if ((error.status !== 429 && error.status < 500) || after > this.context.retry.maxWaitMs) throw error;
      wait = Math.max(after, this.retryMs);
    }
    if (failures + 1 > (this.options.maxReconnectAttempts ?? Infinity)) throw error ?? NerkhError.network(new Error(`${failures + 1} connection attempts failed`));
    await sleep(wait, signal).catch(() => undefined);
    return failures + 1;
  }
}
