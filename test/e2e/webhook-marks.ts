import type { RunResult } from './helpers.js';
import { pollUntil } from './helpers.js';
import type { WebhookReceiver } from './webhook-receiver.js';

/**
 * Positive events to check "nothing else was delivered" against, instead of
 * a fixed wait. The marker endpoint (its own account, added after the
 * endpoints under test) fires one of its rules on a snapshot: the leader
 * evaluates every endpoint on each snapshot and queues what they fire in one
 * write, so once the marker's alert for `value` has arrived (`marked`), the
 * endpoints under test were evaluated on that snapshot too, and whatever they
 * fired on it or before was queued with it or earlier. The sender sends
 * several at once, so `drained` then waits until every delivery queued for
 * one endpoint has been attempted and recorded.
 */
export function webhookMarks(receiver: WebhookReceiver, markerPath: string, cli: (...args: string[]) => Promise<RunResult>) {
  return {
    marked: (rule: string, value: number) =>
      pollUntil(
        async () => receiver.on(markerPath),
        (list) => list.some((r) => r.event?.data.rule === rule && r.event.data.value === value),
        8000,
        50,
        (list) => JSON.stringify(list.map((r) => [r.event?.data.rule, r.event?.data.value])),
      ),
    drained: (username: string, path: string) =>
      pollUntil(
        async () => JSON.parse((await cli('webhooks', 'list', username, '--json')).stdout) as { url: string; pending: number }[],
        (list) => list.some((endpoint) => endpoint.url.endsWith(path) && endpoint.pending === 0),
        8000,
        100,
        (list) => JSON.stringify(list),
      ),
  };
}
