import { request, type IncomingHttpHeaders } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { eventually } from '../support/env.js';

/** A stream opened over real HTTP, its events parsed by eventsource-parser as they arrive. */
export interface SseStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, when the answer is not a stream (an error envelope). */
  body: string;
  events: EventSourceMessage[];
  comments: string[];
  retry: number | null;
  ended: boolean;
  /** When the server ended the stream (epoch ms, this process's clock); null while it is open. */
  endedAt: number | null;
  /** Waits for the n-th event (0-based) and returns it. */
  event(index: number, timeoutMs?: number): Promise<EventSourceMessage>;
  /** Waits for the stream to end and returns its last event. */
  end(timeoutMs?: number): Promise<EventSourceMessage | undefined>;
  close(): void;
}

export function openStream(base: string, path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { headers }, (response) => {
      const stream: SseStream = {
        status: response.statusCode!,
        headers: response.headers,
        body: '',
        events: [],
        comments: [],
        retry: null,
        ended: false,
        endedAt: null,
        event: (index, timeoutMs = 5000) => eventually(() => stream.events[index], timeoutMs, 20) as Promise<EventSourceMessage>,
        end: async (timeoutMs = 5000) => {
          await eventually(() => stream.ended, timeoutMs, 10);
          return stream.events.at(-1);
        },
        close: () => req.destroy(),
      };
      const parser = createParser({
        onEvent: (event) => stream.events.push(event),
        onComment: (comment) => stream.comments.push(comment),
        onRetry: (retry) => (stream.retry = retry),
      });
      response.setEncoding('utf8');
      const isStream = String(response.headers['content-type']).startsWith('text/event-stream');
      response.on('data', (chunk: string) => (isStream ? parser.feed(chunk) : (stream.body += chunk)));
      const ended = () => {
        if (stream.ended) return;
        stream.ended = true;
        stream.endedAt = Date.now();
      };
      response.on('end', ended);
      response.on('error', ended);
      response.on('close', ended);
      if (isStream) resolve(stream);
      else response.on('end', () => resolve(stream));
    });
    req.on('error', reject);
    req.end();
  });
}

export interface StreamRate {
  key: string;
  value: number | null;
  status: string;
  source?: string | null;
}

export function ratesOf(event: EventSourceMessage): { generated_at: string; rates: StreamRate[] } {
  return JSON.parse(event.data) as { generated_at: string; rates: StreamRate[] };
}
