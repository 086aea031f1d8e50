import { pino, type Logger } from 'pino';
import { redactKeysInText, redactKeysInUrl } from './domain/redact.js';

export type { Logger };

/** What a request object becomes in a log line (Fastify's own `req` serializer would write the address as sent). */
interface LoggedRequest {
  method?: string;
  url?: string;
}

/**
 * The one structured logger of a process: JSON lines on stdout, shared by the
 * HTTP layer (Fastify takes it as its instance) and every background part
 * (sources, store, usage, directory), so each line can be filtered the same way.
 *
 * No key reaches a line. Each request line already carries its
 * address redacted; a request object logged whole keeps only its method and
 * redacted address; and every line passes through `redactKeysInText` on its
 * way out, so a key inside any other message (an error naming a URL, say)
 * is replaced too. That last pass costs one regular-expression test for a
 * line with no `%`, `nrk` or `api` in it.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    serializers: { req: (request: LoggedRequest) => ({ method: request.method, url: typeof request.url === 'string' ? redactKeysInUrl(request.url) : undefined }) },
    hooks: { streamWrite: redactKeysInText },
  });
}
