import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import { ApiError } from '../domain/errors.js';
import type { FastPathState } from './fast-detail.js';

/** When the process refuses new work rather than queue it until clients time out. */
export interface LoadShedding {
  /** Mean event-loop delay over one sample above which requests are shed, in ms. */
  maxEventLoopDelayMs: number;
  /** Heap in use above which requests are shed, in bytes. */
  maxHeapUsedBytes: number;
  /** How often the process is sampled, in ms. */
  sampleIntervalMs: number;
  /** The Retry-After of a shed request, in seconds. */
  retryAfterSeconds: number;
}

/**
 * Half a second of mean event-loop delay means every request already waits
 * that long; a full flood at normal cost stays in single milliseconds. The
 * heap bound sheds load before V8 runs out of heap and ends the process.
 */
export const DEFAULT_LOAD_SHEDDING: LoadShedding = {
  maxEventLoopDelayMs: 500,
  maxHeapUsedBytes: Math.floor(getHeapStatistics().heap_size_limit * 0.9),
  sampleIntervalMs: 1_000,
  retryAfterSeconds: 5,
};

/**
 * `@fastify/under-pressure` samples the process and answers Fastify's
 * requests 503 SERVICE_UNAVAILABLE (in the envelope, with Retry-After) while
 * it is overloaded. Its verdict is copied to the raw path's state once per
 * sample, so that path reads one boolean per request and hands such requests
 * to Fastify. Load is shed only after two overloaded samples in a row: one
 * blocked second (start-up compiling every schema, a long collection) is no
 * overload, and a sustained one is caught a second later.
 */
export async function installLoadShedding(app: FastifyInstance, limits: LoadShedding, state: FastPathState): Promise<void> {
  const overloaded = new ApiError('SERVICE_UNAVAILABLE', 'The server is overloaded; retry after the time in Retry-After.', { 'retry-after': String(limits.retryAfterSeconds) });
  await app.register(underPressure, {
    maxEventLoopDelay: limits.maxEventLoopDelayMs,
    maxHeapUsedBytes: limits.maxHeapUsedBytes,
    sampleInterval: limits.sampleIntervalMs,
    // Resolving lets the request through; throwing goes to Fastify's error handler, which writes the envelope.
    pressureHandler: async () => {
      if (state.underPressure) throw overloaded;
    },
  });
  let timer: NodeJS.Timeout | undefined;
  let previous = false;
  const sample = () => {
    const overloadedNow = app.isUnderPressure();
    const shedding = overloadedNow && previous;
    previous = overloadedNow;
    if (shedding !== state.underPressure) app.log.warn({ ...app.memoryUsage() }, shedding ? 'overloaded: shedding requests with 503' : 'load back to normal');
    state.underPressure = shedding;
  };
  app.addHook('onReady', async () => {
    timer = setInterval(sample, limits.sampleIntervalMs).unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
