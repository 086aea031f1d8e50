import type { Command } from 'commander';
import { normaliseReason } from '../domain/market-calendar.js';
import { addDays, daysFrom, MAX_CALENDAR_SPAN_DAYS, readCalendarDay, spanDays } from '../live/calendar-days.js';
import { Markets } from '../live/markets.js';
import { marketsOf } from '../config-checks.js';
import { withContext, type CliContext } from './cli-context.js';
import { printJson, printTable, UsageError } from './output.js';

const MAX_REASON = 200;
/** `list` without --to: this many days from --from. */
const DEFAULT_LIST_DAYS = 31;

function day(text: string, what: string): string {
  const read = readCalendarDay(text);
  if (typeof read !== 'string') throw new UsageError(`invalid ${what}: ${read.error}`);
  return read;
}

/** `2026-11-20`, `1405/08/29`, or a span `from..to` (both ends included) → its days. */
export function readDays(text: string): string[] {
  const [first = '', last, extra] = text.split('..');
  if (extra !== undefined) throw new UsageError(`invalid date "${text}": a date (2026-11-20, 1405/08/29) or a span from..to`);
  const from = day(first, 'date');
  const to = last === undefined ? from : day(last, 'date');
  if (to < from) throw new UsageError(`invalid span "${text}": it ends before it begins`);
  if (spanDays(from, to) > MAX_CALENDAR_SPAN_DAYS) throw new UsageError(`invalid span "${text}": at most ${MAX_CALENDAR_SPAN_DAYS} days at once`);
  return daysFrom(from, to);
}

function marketNamed(context: CliContext, name: string): string {
  if (context.config.markets.some((market) => market.name === name)) return name;
  throw new UsageError(`unknown market "${name}" (markets: ${context.config.markets.map((market) => market.name).join(', ')})`);
}

/** The markets as every node sees them: the config's calendars with the declarations in the store. */
async function marketsNow(context: CliContext): Promise<Markets> {
  const markets = new Markets(context.config.markets, marketsOf(context.config, context.catalogue));
  markets.apply(await context.store.calendar.list());
  return markets;
}

export function calendarCommands(program: Command): void {
  const calendar = program.command('calendar').description('market calendars: closures and openings operators declare (every node applies them within 2 s)');

  calendar
    .command('close <market> <dates>')
    .description('declare a market closed on a date or a span from..to (Gregorian 2026-11-20 or Jalali 1405/08/29)')
    .requiredOption('--reason <text>', 'why, as served with every rate of the market (e.g. "Bazaar closed: mourning")')
    .option('--json', 'machine-readable output')
    .action((name: string, dates: string, options: { reason: string; json?: boolean }) =>
      withContext(async (context) => {
        const market = marketNamed(context, name);
        const days = readDays(dates);
        const reason = normaliseReason(options.reason);
        if (reason.length === 0 || reason.length > MAX_REASON) throw new UsageError(`--reason must have 1 to ${MAX_REASON} characters`);
        await context.store.calendar.declare(market, days, 'close', reason, context.time.now());
        context.changed('calendar');
        if (options.json) printJson({ market, action: 'close', days, reason });
        else console.log(`${market}: closed on ${describe(days)} (${reason})`);
      }),
    );

  calendar
    .command('open <market> <dates>')
    .description('declare a market open on a date (or a span from..to) its calendar closes: a holiday it works after all')
    .option('--json', 'machine-readable output')
    .action((name: string, dates: string, options: { json?: boolean }) =>
      withContext(async (context) => {
        const market = marketNamed(context, name);
        const days = readDays(dates);
        await context.store.calendar.declare(market, days, 'open', null, context.time.now());
        context.changed('calendar');
        if (options.json) printJson({ market, action: 'open', days });
        else console.log(`${market}: open on ${describe(days)}`);
      }),
    );

  calendar
    .command('list')
    .description('the closed days of each market (weekly closures, holidays, declarations) and the days declared open')
    .option('--market <name>', 'only this market')
    .option('--from <date>', 'first day (default today)')
    .option('--to <date>', `last day (default ${DEFAULT_LIST_DAYS - 1} days after --from; at most ${MAX_CALENDAR_SPAN_DAYS} days)`)
    .option('--json', 'machine-readable output')
    .action((options: { market?: string; from?: string; to?: string; json?: boolean }) =>
      withContext(async (context) => {
        const names = options.market === undefined ? context.config.markets.map((market) => market.name) : [marketNamed(context, options.market)];
        const from = options.from === undefined ? context.time.day(context.time.now()) : day(options.from, '--from');
        const to = options.to === undefined ? addDays(from, DEFAULT_LIST_DAYS - 1) : day(options.to, '--to');
        if (to < from) throw new UsageError('--to is before --from');
        if (spanDays(from, to) > MAX_CALENDAR_SPAN_DAYS) throw new UsageError(`at most ${MAX_CALENDAR_SPAN_DAYS} days at once`);
        const markets = await marketsNow(context);
        const declared = await context.store.calendar.list({ from, to });
        const rows: Record<string, string | null>[] = [];
        for (const name of names) {
          const calendar = markets.calendar(name)!;
          const mine = new Map(declared.filter((entry) => entry.market === name).map((entry) => [entry.day, entry]));
          const closed = new Map(calendar.closedDays(from, to).map((entry) => [entry.date, entry]));
          for (const date of daysFrom(from, to)) {
            const entry = closed.get(date);
            const declaration = mine.get(date);
            if (!entry && !declaration) continue;
            rows.push({
              market: name,
              date,
              date_jalali: entry?.dateJalali ?? calendar.zone.jalaliDate(calendar.zone.localToEpoch(...(date.split('-').map(Number) as [number, number, number]), 12)),
              state: entry ? 'closed' : 'open',
              reason: entry?.reason.en ?? null,
              reason_fa: entry?.reason.fa ?? null,
              declared: declaration ? declaration.action : null,
            });
          }
        }
        if (options.json) printJson(rows);
        else printTable(rows, ['market', 'date', 'date_jalali', 'state', 'reason', 'declared']);
      }),
    );
}

function describe(days: readonly string[]): string {
  return days.length === 1 ? days[0]! : `${days[0]}..${days[days.length - 1]} (${days.length} days)`;
}
