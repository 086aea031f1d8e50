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
