import type { Command } from 'commander';
import { ApiError } from '../domain/errors.js';
import { Buckets, INTERVALS } from '../history/ranges/buckets.js';
import { parseHistoryRange } from '../history/ranges/range-query.js';
import { candleFragment, HistoryReader } from '../history/history-reader.js';
import { withContext, type CliContext } from './context.js';
import { importHistory, progressInterval } from './history-import.js';
import { UsageError } from './output.js';

export function historyCommands(program: Command): void {
  const history = program.command('history').description('the recorded history of rates: backfill and export');

  history
    .command('import <file>')
    .description(
      'backfill from a CSV: "key,time,value" (values served at a time) or "key,date,open,high,low,close" (daily candles); written in short transactions a running server keeps working between; importing a file twice changes nothing',
    )
    .option('--progress <seconds>', 'a progress line on stderr every <seconds> (default: a live line on a terminal, otherwise every 5 s; 0: none)')
    .option('--json', 'machine-readable output')
    .action((file: string, options: { progress?: string; json?: boolean }) => {
      const progressMs = progressInterval(options.progress);
      return withContext((context) => importHistory(context, historyOf(context), file, { progressMs, json: options.json === true }));
    });

  history
    .command('export <key>')
    .description('print the candles of one reference')
    .option('--from <when>', 'first candle: a date, a Jalali date (1405/08/10) or a date-time with an offset (default: 30 candles back)')
    .option('--to <when>', 'last candle (default: now); a date includes that whole day')
    .option('--interval <interval>', `candle length: ${INTERVALS.join(', ')}`, '1d')
    .option('--format <format>', 'csv or json', 'csv')
    .action((key: string, options: { from?: string; to?: string; interval: string; format: string }) =>
      withContext(async (context) => {
        if (options.format !== 'csv' && options.format !== 'json') throw new UsageError(`invalid --format "${options.format}": csv or json`);
        const reference = context.catalogue.lookup(key);
        if (!reference) throw new UsageError(`unknown reference "${key}"`);
        const { reader, buckets } = historyOf(context);
        const now = context.time.now();
        let range;
        try {
          range = parseHistoryRange({ interval: options.interval, from: options.from, to: options.to }, now, buckets, reader.minuteRetentionStart(now), Infinity);
        } catch (error) {
          if (error instanceof ApiError) throw new UsageError(error.message.replace(/^Query parameter "(\w+)"/, '--$1'));
          throw error;
        }
        const candles = await reader.candles(reference.key, range.interval, range.from, range.to);
        const time = context.time;
        if (options.format === 'json') {
          // Written by hand so every value keeps its digits (JSON.stringify would go through a float).
          console.log(
            `{"key":${JSON.stringify(reference.key)},"interval":"${range.interval}","from":"${time.format(range.from)}","to":"${time.format(range.to)}","count":${candles.length},"candles":[` +
              candles.map((candle) => candleFragment(candle, time)).join(',') +
              ']}',
          );
          return;
        }
        const daily = range.interval === '1d' || range.interval === '1w';
        // Daily candles come out in the import's own daily format, so an export can be imported elsewhere.
        console.log(daily ? 'key,date,open,high,low,close,points' : 'key,time,open,high,low,close,points');
        for (const c of candles) console.log(`${reference.key},${daily ? time.day(c.start) : time.format(c.start)},${c.open},${c.high},${c.low},${c.close},${c.points}`);
      }),
    );
}

function historyOf(context: CliContext): { reader: HistoryReader; buckets: Buckets } {
  const buckets = new Buckets(context.time);
  return { reader: new HistoryReader(context.store.history, buckets, context.store.health, context.config.history.minuteDays), buckets };
}
