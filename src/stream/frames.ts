/**
 * Server-Sent Events framing (WHATWG HTML §9.2). Each frame is built once and
 * written to every subscriber as the same Buffer. JSON never holds a raw
 * newline, so a `data:` payload is always one line.
 */
export function eventFrame(event: string, id: number, data: string): Buffer {
  return Buffer.from(`event: ${event}\nid: ${id}\ndata: ${data}\n\n`);
}

/** Sent first: how long a disconnected EventSource waits before reconnecting. */
export const RETRY_FRAME = Buffer.from('retry: 3000\n\n');

/** A comment line: keeps proxies and idle timers from closing a quiet stream. */
export const PING_FRAME = Buffer.from(': ping\n\n');

/** The `data` of both events: `{generated_at, rates: Rate[]}`, from rates serialised when the snapshot was built. */
export function ratesData(generatedAt: string, rateJson: readonly string[]): string {
  return `{"generated_at":"${generatedAt}","rates":[${rateJson.join(',')}]}`;
}

/**
 * Sent once, before the first snapshot, to a stream whose `?keys=` named
 * something it leaves out: `data` is `{unknown_keys, denied_keys}`, as in the
 * detail endpoint's `meta`, so a board can say why a price is missing. No
 * `id:`, so Last-Event-ID stays the last snapshot version.
 */
export function metaFrame(unknownKeys: readonly string[], deniedKeys: readonly string[]): Buffer {
  return Buffer.from(`event: meta\ndata: {"unknown_keys":${JSON.stringify(unknownKeys)},"denied_keys":${JSON.stringify(deniedKeys)}}\n\n`);
}

/**
 * The last event of a stream the server ends because its key, account or
 * plan no longer allows it: `data` is the error envelope the same request
 * would now be refused with. No `id:`, so Last-Event-ID stays the last
 * snapshot version.
 */
export function errorFrame(envelope: string): Buffer {
  return Buffer.from(`event: error\ndata: ${envelope}\n\n`);
}

/** The last event of a stream that reached its plan's `max_stream_seconds`: reconnect (after `retry`) for a fresh one. */
export function reconnectFrame(generatedAt: string, maxStreamSeconds: number): Buffer {
  const message = `This stream reached its plan's lifetime of ${maxStreamSeconds} s; reconnect for a new one.`;
  return Buffer.from(`event: reconnect\ndata: {"generated_at":"${generatedAt}","reason":"max_stream_seconds","message":"${message}"}\n\n`);
}
