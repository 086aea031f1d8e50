import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { getHeapStatistics } from 'node:v8';
import { DEFAULT_SHED_AFTER_LAG_MS } from '../config.js';
import { ApiError } from '../domain/errors.js';
import type { ServingState } from './serving-state.js';
import { OverloadSwitch } from './shedding/overload-switch.js';

/** When the process refuses work rather than queue it until clients time out, and whose. */
export interface LoadShedding {
  /** Mean event-loop delay, over three samples in a row, above which the costliest callers are shed, in ms. */
  maxEventLoopDelayMs: number;
  /** Mean event-loop delay below which shedding may end, in ms (default: a quarter of the above). */
  leaveEventLoopDelayMs?: number;
  /** Event-loop utilisation (0..1), over three samples in a row, above which a caller crowding out the others is shed. */
  maxEventLoopUtilization: number;
  /** Utilisation below which that shedding may end (default 0.7). */
  leaveEventLoopUtilization?: number;
  /** Shedding lasts at least this long after the last overloaded sample, in ms. */
  minShedMs: number;
  /** Half-life of a caller's recorded cost, in ms. */
  costHalfLifeMs: number;
  /** While still overloaded this long after the last caller was shed, the next costliest is shed too, in ms. */
  escalateAfterMs: number;
  /** Heap in use above which every request is shed, in bytes. */
  maxHeapUsedBytes: number;
  /** How often the process is sampled, in ms. */
  sampleIntervalMs: number;
  /** The Retry-After of a shed request, in seconds. */
  retryAfterSeconds: number;
}

/**
 * 250 ms of mean event-loop delay over three quarter-second samples in a row
 * means every request already waits that long; a full flood of cheap requests
 * stays in single milliseconds. Shedding ends below a quarter of that, and not within 5 s of the last
 * overloaded sample: that is what stops it switching on and off each second.
 * The heap bound sheds everything before V8 runs out of heap and ends the process.
 */
export const DEFAULT_LOAD_SHEDDING: LoadShedding = {
  maxEventLoopDelayMs: DEFAULT_SHED_AFTER_LAG_MS,
  maxEventLoopUtilization: 0.9,
  minShedMs: 5_000,
  costHalfLifeMs: 2_000,
  escalateAfterMs: 2_000,
  maxHeapUsedBytes: Math.floor(getHeapStatistics().heap_size_limit * 0.9),
  sampleIntervalMs: 250,
  retryAfterSeconds: 5,
};

/**
 * On a saturated loop, the others must cost at least this share of the total
 * for the dominant caller to be shed: a load balancer's probes beside one
 * busy client are no one being crowded out.
 */
const CROWDED_OUT_SHARE = 0.01;
/** ...and its requests must each cost this many times the others' on average: alike requests are already shared fairly, turn by turn. */
const COSTLIER_BY = 4;

/** Routes that are never shed: probes and monitoring must see the process as it is, and cost next to nothing. */
const NEVER_SHED = new Set(['/healthz', '/readyz', '/metrics']);

export function overloadedError(retryAfterSeconds: number): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'The server is overloaded and your recent requests cost it the most; retry after the time in Retry-After.', {
    'retry-after': String(retryAfterSeconds),
  });
}

/**
 * Overload of three kinds. A full heap is the whole process's: `@fastify/under-pressure`
 * answers every request 503 (the raw path hands them to Fastify). An
 * overloaded event loop is someone's: every request's handling time is charged
 * to its caller (state.costs, see finish.ts), and only the callers that cost
 * the most are refused, in the pipeline after admission (keyed) or by the hook
 * below (without a key). A lagging loop (every request waits) sheds the
 * costliest callers, even a lone one; a saturated loop that still answers
 * promptly sheds only a caller taking at least half of it from others with
 * requests many times costlier than theirs. Each
 * signal has its own OverloadSwitch: enter above one threshold, leave below a
 * lower one after a hold.
 * See docs/reliability.md#overload.
 */
export async function installLoadShedding(app: FastifyInstance, limits: LoadShedding, state: ServingState): Promise<void> {
  const overloaded = (state.overloaded = overloadedError(limits.retryAfterSeconds));
  await app.register(underPressure, {
    // The event loop is judged below, per caller; the plugin only samples it.
    maxEventLoopDelay: 0,
    maxHeapUsedBytes: limits.maxHeapUsedBytes,
    sampleInterval: limits.sampleIntervalMs,
    // Utilisation over each sample, not since start.
    eventLoopUtilizationMode: 'interval',
    // Called only for a full heap. Throwing goes to Fastify's error handler, which writes the envelope.
    pressureHandler: async () => {
      throw overloaded;
    },
  });
  app.addHook('onRequest', async (request) => {
    if (!state.shedding || request.routeOptions.config?.endpoint !== undefined || NEVER_SHED.has(request.routeOptions.url ?? '')) return;
    if (state.costs.isShed('')) throw overloaded;
  });
  const hold = limits.minShedMs;
  const lagging = new OverloadSwitch({ enter: limits.maxEventLoopDelayMs, leave: limits.leaveEventLoopDelayMs ?? limits.maxEventLoopDelayMs / 4, minHoldMs: hold });
  const saturated = new OverloadSwitch({ enter: limits.maxEventLoopUtilization, leave: limits.leaveEventLoopUtilization ?? Math.min(0.7, limits.maxEventLoopUtilization), minHoldMs: hold });
  const decay = Math.pow(0.5, limits.sampleIntervalMs / limits.costHalfLifeMs);
  let lastShed = -Infinity;
  const sample = () => {
    const now = performance.now();
    const usage = app.memoryUsage();
    state.underPressure = app.isUnderPressure();
    const lagChanged = lagging.sample(usage.eventLoopDelay, now);
    const saturationChanged = saturated.sample(usage.eventLoopUtilized, now);
    let shed: string[] = [];
    if (lagging.shedding) {
      // Every request waits: the costliest callers go, even a single one, and more while it lasts.
      if (lagChanged || (lagging.overloadedAt(now) && now - lastShed >= limits.escalateAfterMs)) shed = state.costs.shedCostliest();
    } else if (saturated.shedding) {
      // Requests are still answered promptly, but one caller may be taking the loop from the others.
      shed = state.costs.shedDominant(CROWDED_OUT_SHARE, COSTLIER_BY);
    } else if (lagChanged || saturationChanged) {
      state.costs.release();
      app.log.warn({ ...usage }, 'load back to normal: shedding ended');
    }
    if (shed.length > 0) {
      lastShed = now;
      app.log.warn({ ...usage, shed: shed.map((caller) => caller || '(no key)') }, 'overloaded: shedding the costliest callers with 503');
    }
    state.shedding = lagging.shedding || saturated.shedding;
    state.costs.decay(decay);
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(sample, limits.sampleIntervalMs).unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
