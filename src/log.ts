import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The one structured logger of a process: JSON lines on stdout, shared by the
 * HTTP layer (Fastify takes it as its instance) and every background part
 * (sources, store, usage, directory), so each line can be filtered the same way.
 */
export function createLogger(level: string): Logger {
  return pino({ level });
}
