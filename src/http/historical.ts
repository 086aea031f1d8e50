import type { FastifyReply, FastifyRequest } from 'fastify';
import { historicalRates } from '../history/historical.js';
import { checkAtWindow, parseAt } from '../history/range.js';
import { renderHistoricalDetail, resolveNames } from '../render/historical.js';
import { secondsToBoundary, sendRendered } from './conditional.js';
import type { AppDeps } from './deps.js';

/** A range that ended this long ago is settled: every candle in it has been written. */
const SETTLED_MS = 60_000;
/** How long a caller may keep an answer about the settled past. */
const PAST_MAX_AGE_SECONDS = 86_400;

/** Cache lifetime of a history answer: a day for the settled past, else until the caller's next refresh boundary. */
export function historyCacheSeconds(end: number, refreshIntervalSeconds: number, now: number): number {
  return end <= now - SETTLED_MS ? PAST_MAX_AGE_SECONDS : secondsToBoundary(refreshIntervalSeconds, now);
}

/**
 * `GET /v1/rates/{keys}?at=…`: the detail answer as served at that moment
 * (service `history`, admitted as such by the access hook). Checks: `at`
 * (400), keys (400/404/403), the plan's window (403).
 */
export async function sendHistoricalDetail(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, segment: string, atText: string): Promise<FastifyReply> {
  const now = deps.time.now();
  const account = request.access!.account;
  const { buckets } = deps.history;
  const at = parseAt(atText, now, buckets);
  const named = resolveNames(deps.catalogue, segment, account.allowance);
  checkAtWindow(at, account.plan.history_days, now, buckets);
  const rates = await historicalRates(deps.history, named.references, at);
  const rendered = renderHistoricalDetail(rates, named, (ms) => deps.time.format(ms), deps.time.format(now));
  return sendRendered(request, reply, rendered, historyCacheSeconds(at, account.plan.refresh_interval_seconds, now));
}
