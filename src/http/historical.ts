import type { FastifyReply, FastifyRequest } from 'fastify';
import { admit, type AdmissionRecord } from '../access/admission.js';
import { ApiError } from '../domain/errors.js';
import { historicalRates } from '../history/historical.js';
import { checkAtWindow, parseAt } from '../history/range.js';
import { renderHistoricalDetail, resolveNames } from '../render/historical.js';
import { secondsToBoundary, sendRendered } from './conditional.js';
import type { DetailRequest } from './answer-detail.js';
import type { AppDeps } from './deps.js';
import { sendError } from './error-handler.js';
import { unknownParameter } from './query.js';

/** A range that ended this long ago is settled: every candle in it has been written. */
const SETTLED_MS = 60_000;
/** How long a caller may keep an answer about the settled past. */
const PAST_MAX_AGE_SECONDS = 86_400;

/** Cache lifetime of a history answer: a day for the settled past, else until the caller's next refresh boundary. */
export function historyCacheSeconds(end: number, refreshIntervalSeconds: number, now: number): number {
  return end <= now - SETTLED_MS ? PAST_MAX_AGE_SECONDS : secondsToBoundary(refreshIntervalSeconds, now);
}

/**
 * `GET /v1/rates/{keys}?at=…`: the detail answer as served at that moment. It
 * is the `history` service: admitted (key, plan, origin, limit) and counted as
 * such, then the query (400), keys (400/404/403) and the plan's window (403).
 * It reads the store, so it is answered here rather than by `answerDetail`.
 */
export async function answerAt(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, input: DetailRequest): Promise<FastifyReply> {
  const record: AdmissionRecord = { access: null, headers: [] };
  try {
    const admitted = admit(deps, 'history', input.apiKey, input.origin, input.address, input.now, record);
    // Only when the shared limiter asks Redis first (rare).
    if (admitted instanceof Promise) await admitted;
    const params = new URLSearchParams(input.query ?? '');
    for (const [name] of params) if (name !== 'at') throw unknownParameter(name, ['at']);
    let segment: string;
    try {
      segment = decodeURIComponent(input.path.slice('/v1/rates/'.length));
    } catch {
      throw new ApiError('INVALID_KEYS', 'The keys segment is not validly percent-encoded.');
    }
    for (let i = 0; i < record.headers.length; i += 2) reply.header(record.headers[i]!, record.headers[i + 1]);
    request.access = record.access;
    request.meteredAs = 'history';
    return await sendHistoricalDetail(deps, request, reply, segment, params.get('at')!);
  } catch (caught) {
    request.access = record.access;
    request.meteredAs = 'history';
    if (!(caught instanceof ApiError)) throw caught;
    for (let i = 0; i < record.headers.length; i += 2) reply.header(record.headers[i]!, record.headers[i + 1]);
    return sendError(reply, caught, deps.time, request.id);
  }
}

async function sendHistoricalDetail(deps: AppDeps, request: FastifyRequest, reply: FastifyReply, segment: string, atText: string): Promise<FastifyReply> {
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
