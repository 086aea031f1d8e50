import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { describeFetchFailure } from '../sources/fetch-failure.js';
import { guardedLookup, webhookUrlRefusal } from './address.js';

/** What one attempt came to: a status (any), or an error in a few words; and how long it took. */
export interface PostOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * POST one signed delivery. The whole exchange up to the response's status
 * is bounded by `timeoutMs`; the body answered is read and thrown away. The
 * connection uses only addresses the rule allows (checked on the resolved
 * addresses, so a name that moved to a private address is refused), and no
 * redirect is followed (a 3xx is a failed attempt).
 *
 * node:http rather than fetch: it takes a lookup function per request, which
 * is where the resolved address can be checked before connecting.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, options: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal }): Promise<PostOutcome> {
  const started = performance.now();
  const took = () => performance.now() - started;
  const refusal = webhookUrlRefusal(url, options.allowPrivate);
  if (refusal) return Promise.resolve({ status: null, error: `address refused: ${refusal}`, durationMs: 0 });
  const parsed = new URL(url);
  const send = parsed.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const outgoing = send(
      parsed,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Nerkh-Webhooks/1' },
        lookup: guardedLookup(parsed.protocol, options.allowPrivate) as never,
        // One connection per delivery: no socket kept to a host whose address may change.
        agent: false,
        signal: options.signal,
      },
      (response: IncomingMessage) => {
        finish({ status: response.statusCode ?? null, error: null, durationMs: took() });
        // The answer's body means nothing here; it is drained, and cut off if it never ends.
        response.resume();
        const cut = setTimeout(() => response.destroy(), options.timeoutMs);
        cut.unref();
        response.on('close', () => clearTimeout(cut));
      },
    );
    const timer = setTimeout(() => {
      outgoing.destroy();
      finish({ status: null, error: `timed out after ${options.timeoutMs / 1000} s`, durationMs: took() });
    }, options.timeoutMs);
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // The address rule's refusal names the address and why; anything else is described by its code alone.
      finish({ status: null, error: error.code === 'EADDRREFUSED' ? `address refused: ${error.message}` : describeFetchFailure(error), durationMs: took() });
    });
    outgoing.end(body);
  });
}
