import type { NerkhError } from './errors.js';

export interface RetryPolicy {
  /** Retries of a 429 or 503 answer. */
  retries: number;
  /** The longest wait before a retry; a longer Retry-After is thrown to the caller at once. */
  maxWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 2, maxWaitMs: 10_000 };

/**
 * How long to wait before retrying after `error` on the given attempt (0 =
 * first), or null to give up. Only 429 and 503 are retried: what the server
 * says to wait for; without a Retry-After, 1 s, 2 s, 4 s …
 */
export function retryDelay(error: NerkhError, attempt: number, policy: RetryPolicy): number | null {
  if (attempt >= policy.retries) return null;
  if (error.status !== 429 && error.status !== 503) return null;
  // Waiting does not end these: a stream must be closed first, a bad key stays bad.
  if (error.code === 'TOO_MANY_STREAMS' || error.code === 'TOO_MANY_FAILED_ATTEMPTS') return null;
  const wait = error.retryAfter !== null ? error.retryAfter * 1000 : 1000 * 2 ** attempt;
  return wait <= policy.maxWaitMs ? wait : null;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
