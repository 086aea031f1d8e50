/**
 * Run by stream-gc.test.ts as `node --expose-gc --import tsx stream-gc-child.ts <baseUrl> <apiKey> <mode> <key>`:
 * a stream of @nerkh/client that collects garbage after its first event, then
 *   abort: aborts its signal, counts what still comes, then opens another stream: with max_streams 1
 *          that works only once the server saw the first connection close;
 *   idle:  waits for the idle timeout (500 ms) to replace the silent connection.
 * Prints one JSON line: the events after the first, when the iteration ended, and whether a stream reopened.
 */
import { NerkhClient } from '../../clients/typescript/src/index.js';

const [baseUrl, apiKey, mode, key] = process.argv.slice(2) as [string, string, 'abort' | 'idle', string];
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with --expose-gc');

const controller = new AbortController();
const stream = new NerkhClient({ baseUrl, apiKey }).stream({ keys: key, signal: controller.signal, ...(mode === 'idle' ? { idleTimeoutMs: 500 } : {}) });
const later: { type: string; ms: number }[] = [];
let firstAt = 0;
let abortedAt = 0;
let endedMs: number | null = null;
let reopened: string | null = null;
const report = (ended: boolean) => console.log(JSON.stringify({ ended, endedMs, later, reopened }));
// However the stream behaves, the child answers within 12 s.
const deadline = setTimeout(() => {
  report(false);
  process.exit(0);
}, 12_000);

for await (const event of stream) {
  if (firstAt === 0) {
    firstAt = Date.now();
    // Everything not held strongly goes now: what a busy process's next collection would do.
    collect();
    await new Promise((resolve) => setTimeout(resolve, 100));
    collect();
    if (mode === 'abort') {
      abortedAt = Date.now();
      controller.abort();
    }
    continue;
  }
  later.push({ type: event.type, ms: Date.now() - firstAt });
  // idle: the replacement connection's snapshot is what was waited for.
  if (mode === 'idle' && event.type === 'snapshot') break;
}
if (abortedAt) endedMs = Date.now() - abortedAt;
if (mode === 'abort') reopened = await reopen();
clearTimeout(deadline);
report(true);

/** A second stream's first event type, or the last error; the server frees the slot as it sees the socket close. */
async function reopen(): Promise<string> {
  let last = '';
  for (let attempt = 0; attempt < 20; attempt++) {
    const again = new AbortController();
    try {
      for await (const event of new NerkhClient({ baseUrl, apiKey }).stream({ keys: key, signal: again.signal })) {
        again.abort();
        return event.type;
      }
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last;
}
