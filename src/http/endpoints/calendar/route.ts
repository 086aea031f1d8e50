import { ApiError } from '../../../domain/errors.js';
import { DEFAULT_MARKET_SPECS } from '../../../domain/market-specs.js';
import { addDays, MAX_CALENDAR_SPAN_DAYS, readCalendarDay, spanDays } from '../../../live/calendar-days.js';
import { Markets } from '../../../live/markets.js';
import { CalendarRenderer } from './render.js';
import { secondsToBoundary } from '../../conditional.js';
import type { AppDeps } from '../../deps.js';
import { keyedEndpoint, type KeyedEndpoint } from '../../pipeline/endpoint.js';
import { queryParams } from '../../pipeline/params.js';
import { endpointModule } from '../module.js';
import { CalendarResponse, ClosedDaySchema } from './schema.js';

/** Without `to`: this many days from `from`. */
const DEFAULT_DAYS = 31;

const dateInput = (description: string) =>
  ({
    type: 'string',
    minLength: 1,
    maxLength: 40,
    description: `${description}: a date (2026-11-20) or a Jalali date (1405/08/29 or 1405-08-29; a year below 1700 is Jalali), in ASCII, Persian (۱۴۰۵/۰۸/۲۹) or Arabic-Indic digits`,
    examples: ['1406/01/01'],
  }) as const;

function day(name: string, text: string): string {
  const read = readCalendarDay(text);
  if (typeof read !== 'string') throw new ApiError('INVALID_PARAMETER', `Query parameter ${JSON.stringify(name)} is invalid: ${read.error}.`);
  return read;
}

/**
 * `GET /v1/calendar`: the closed days of a market (docs/api.md#calendar),
 * weekly closures, holidays and operators' closures alike. Reference data
 * with no price in it, like the catalogue: counted under the `catalogue`
 * service, which every built-in plan has.
 */
export function calendarEndpoint(deps: Pick<AppDeps, 'time' | 'markets'>): KeyedEndpoint {
  const markets = deps.markets ?? new Markets(DEFAULT_MARKET_SPECS, new Map());
  const names = markets.names as [string, ...string[]];
  const renderer = new CalendarRenderer();
  return keyedEndpoint({
    path: '/v1/calendar',
    service: 'catalogue',
    query: queryParams({
      market: { type: 'enum', values: names, default: names.includes('tehran') ? 'tehran' : names[0], description: 'The market (config `markets`)' },
      from: dateInput('First day (default: today in the market\'s zone)'),
      to: dateInput(`Last day, included (default: ${DEFAULT_DAYS - 1} days after \`from\`); at most ${MAX_CALENDAR_SPAN_DAYS} days from \`from\``),
    }),
    doc: {
      tags: ['rates'],
      summary: 'The days a market is closed: weekly closures, official holidays and closures operators declared',
      description:
        'One entry per closed day (a day the market is closed for at least half of, in its zone), with the reason in English and Persian. Official holidays come from a maintained holiday library; the lunar ones are computed, and operators confirm or correct them. Any plan (service `catalogue`).',
      ok: CalendarResponse,
      conditional: true,
      errors: [400, 401, 403, 429, 503],
    },
    answer: 'rendered',
    render: (exchange, account, params) => {
      const calendar = markets.calendar(params.market)!;
      const from = params.from === undefined ? calendar.zone.day(exchange.now) : day('from', params.from);
      const to = params.to === undefined ? addDays(from, DEFAULT_DAYS - 1) : day('to', params.to);
      if (to < from) throw new ApiError('INVALID_PARAMETER', 'Query parameter "to" is invalid: it is before "from".');
      if (spanDays(from, to) > MAX_CALENDAR_SPAN_DAYS) throw new ApiError('INVALID_PARAMETER', `Query parameter "to" is invalid: at most ${MAX_CALENDAR_SPAN_DAYS} days from "from".`);
      const answer = renderer.render(params.market, from, to, markets.revision, () => markets.calendar(params.market)!.closedDays(from, to), deps.time.format(exchange.now));
      return { ...answer, maxAgeSeconds: secondsToBoundary(account.plan.refresh_interval_seconds, exchange.now) };
    },
  });
}

export const endpoint = endpointModule({
  schemas: [ClosedDaySchema, CalendarResponse],
  build: ({ deps }) => calendarEndpoint(deps),
  examples: { '/v1/calendar': () => '/v1/calendar?market=tehran&from=1406/01/01&to=1406/01/31' },
});
