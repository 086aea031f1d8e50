import { ApiError } from '../../../domain/errors.js';
import { KEY_PATTERN } from '../../../domain/reference.js';
import { RIAL_CURRENCY } from '../../../domain/units.js';
import { INTERVALS } from '../../../history/ranges/buckets.js';
import { parseHistoryRange, withinWindow } from '../../../history/ranges/range-query.js';
import { resolveOne } from '../../../render/reference-keys.js';
import { HistoryAnswers } from '../../../history/answers/history-answers.js';
import { matchesEtag, secondsToBoundary } from '../../conditional.js';
import type { AppDeps } from '../../deps.js';
import { acceptedEncoding } from '../../encoding.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { CandleSchema, HistoryResponse } from './schema.js';
import { endpointModule } from '../module.js';
import { UNIT } from '../unit-param.js';

/** A range that ended this long ago is settled: every candle in it has been written. */
const SETTLED_MS = 60_000;
/** How long a caller may keep an answer about the settled past. */
const PAST_MAX_AGE_SECONDS = 86_400;

/** Cache lifetime of a history answer: a day for the settled past, else until the caller's next refresh boundary. */
export function historyCacheSeconds(end: number, refreshIntervalSeconds: number, now: number): number {
  return end <= now - SETTLED_MS ? PAST_MAX_AGE_SECONDS : secondsToBoundary(refreshIntervalSeconds, now);
}

const dateInput = (description: string) =>
  ({
    type: 'string',
    description: `${description}: a date (2026-11-01), a Jalali date (1405/08/10 or 1405-08-10; a year below 1700 is Jalali) or a date-time with an offset, in ASCII, Persian (۱۴۰۵/۰۸/۱۰) or Arabic-Indic digits`,
    examples: ['2026-11-01'],
  }) as const;

const query = queryParams({
  interval: { type: 'enum', values: INTERVALS, default: '1d', description: `Candle length: ${INTERVALS.join(', ')}` },
  from: dateInput('First candle (default: 30 candles before `to`); not later than now'),
  to: dateInput('Last candle (default: now; a later one is read as now); a date includes that whole day'),
  unit: UNIT,
});

/**
 * `GET /v1/rates/{key}/history`: OHLC candles of one reference (service
 * `history`). The answer is rendered by `answers` (in worker threads where
 * the store allows it); only the checks run here.
 */
export function historyEndpoint(deps: Pick<AppDeps, 'history' | 'catalogue' | 'time'>, answers: HistoryAnswers): KeyedEndpoint {
  return keyedEndpoint({
    path: '/v1/rates/:key/history',
    service: 'history',
    query,
    pathParam: { name: 'key', pattern: KEY_PATTERN, description: 'One reference key or alias', examples: ['usd_free'], invalid: new ApiError('INVALID_KEYS') },
    doc: {
      tags: ['rates'],
      summary: 'Candles (open, high, low, close) of one reference over a range',
      ok: HistoryResponse,
      conditional: true,
      errors: [400, 401, 403, 404, 429, 503],
    },
    answer: 'rendered',
    render: async (exchange, account, params, key) => {
      const now = exchange.now;
      const { history } = deps;
      // Checks in the documented order: the range (400), the key (404/403), then the plan's window (403).
      const asked = parseHistoryRange(params, now, history.buckets, history.minuteRetentionStart(now));
      const reference = resolveOne(deps.catalogue, key, account.allowance);
      const range = withinWindow(asked, account.plan.history_days, now, history.buckets);
      // Only a rial price changes in toman; any other is the same answer.
      const toman = params.unit === 'toman' && reference.currency === RIAL_CURRENCY;
      const answer = await answers.answer({
        reference,
        interval: range.interval,
        from: range.from,
        to: range.to,
        toman,
        now,
        // The coding writeRendered will choose for a body worth compressing, so the worker can make that form.
        encoding: acceptedEncoding(exchange.acceptEncoding),
        holds: (etag) => matchesEtag(exchange.ifNoneMatch, etag),
      });
      return { ...answer, maxAgeSeconds: historyCacheSeconds(range.to, account.plan.refresh_interval_seconds, now) };
    },
  });
}

export const endpoint = endpointModule({
  schemas: [CandleSchema, HistoryResponse],
  build: (context) => {
    const { deps } = context;
    // Rendered in worker threads where the store allows (see HistoryAnswers); the threads end with the app.
    const answers = new HistoryAnswers(deps.history, deps.time);
    context.onClose(() => answers.close());
    context.expose('historyAnswers', answers);
    return historyEndpoint(deps, answers);
  },
  examples: { '/v1/rates/:key/history': () => '/v1/rates/usd_free/history?interval=1h' },
});
