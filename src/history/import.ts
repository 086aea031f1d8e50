import { parse } from 'csv-parse/sync';
import type { Catalogue } from '../catalogue/catalogue.js';
import { addPoint, candleOf, rollUp, type Candle } from '../domain/candle.js';
import { compareDecimal, isPositiveDecimal } from '../domain/decimal.js';
import type { Grain, HistoryRepository } from '../store/history.js';
import { INTERVAL_OF, type Buckets } from './buckets.js';
import { readTimeInput } from './range.js';

/** The source recorded for imported candles. */
export const IMPORT_SOURCE = 'import';

const POINT_COLUMNS = ['key', 'time', 'value'];
const DAILY_COLUMNS = ['key', 'date', 'open', 'high', 'low', 'close'];

/** A file that cannot be imported: every bad line, each with its number. */
export class ImportError extends Error {
  constructor(readonly problems: { line: number; message: string }[]) {
    super(`${problems.length} bad line${problems.length === 1 ? '' : 's'}; nothing imported`);
  }
}

interface Point {
  at: number;
  value: string;
}

/** A checked file, ready to write. */
export type ParsedImport =
  | { format: 'points'; rows: number; points: Map<string, Point[]> }
  | { format: 'daily'; rows: number; days: { reference: string; candle: Candle }[] };

export interface ImportSummary {
  format: 'points' | 'daily';
  rows: number;
  /** Candles written per grain. */
  candles: { minute: number; hour: number; day: number };
  /** Stored candles left as they were: recorded ones are never replaced. */
  kept: number;
}

/**
 * Read a CSV of `key,time,value` (values served at a time) or
 * `key,date,open,high,low,close[,points]` (daily candles), with a header
 * row. Every line is checked before anything is written; every bad line is
 * reported with its number. Keys may be aliases; values are decimals above
 * zero, kept as written; times need an offset; dates may be Jalali. Rows from
 * today (in the zone) on are refused: today belongs to the live recording.
 */
export function parseImport(text: string, catalogue: Catalogue, buckets: Buckets, now: number): ParsedImport {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text.replace(/^\uFEFF/, ''), { info: true, skip_empty_lines: true, trim: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] }) as unknown as typeof records;
  } catch (error) {
    const line = (error as { lines?: number }).lines ?? 0;
    throw new ImportError([{ line, message: `not readable as CSV: ${(error as Error).message.split('\n')[0]}` }]);
  }
  if (records.length === 0) throw new ImportError([{ line: 1, message: 'the file is empty' }]);
  const header = records[0]!.record.map((cell) => cell.toLowerCase());
  const daily = sameColumns(header, DAILY_COLUMNS) || sameColumns(header, [...DAILY_COLUMNS, 'points']);
  if (!daily && !sameColumns(header, POINT_COLUMNS)) {
    throw new ImportError([{ line: records[0]!.info.lines, message: `the header must be "${POINT_COLUMNS.join(',')}" or "${DAILY_COLUMNS.join(',')}" (optionally ",points"), got "${header.join(',')}"` }]);
  }
  const today = buckets.start(now, '1d');
  const problems: { line: number; message: string }[] = [];
  const points = new Map<string, Point[]>();
  const days: { reference: string; candle: Candle }[] = [];
  const seenDays = new Map<string, number>();

  for (const { record, info } of records.slice(1)) {
    const line = info.lines;
    const fail = (message: string) => problems.push({ line, message });
    if (record.length !== header.length) {
      fail(`expected ${header.length} columns, got ${record.length}`);
      continue;
    }
    const reference = catalogue.lookup(record[0]!);
    if (!reference) {
      fail(`unknown reference key ${JSON.stringify(record[0]!.slice(0, 64))}`);
      continue;
    }
    const when = readTimeInput(record[1]!);
    if ('error' in when) {
      fail(`${header[1]}: ${when.error}`);
      continue;
    }
    if (!daily) {
      if (!('instant' in when)) {
        fail('time: needs a date-time with an offset (2026-11-01T10:00:00+03:30), not a date');
        continue;
      }
      const value = record[2]!;
      if (!isPositiveDecimal(value)) {
        fail(`value: ${JSON.stringify(value.slice(0, 40))} is not a number above zero`);
        continue;
      }
      if (when.instant >= today) {
        fail('time: lies today or later; today belongs to the live recording');
        continue;
      }
      let list = points.get(reference.key);
      if (!list) points.set(reference.key, (list = []));
      list.push({ at: when.instant, value });
      continue;
    }
    if (!('day' in when)) {
      fail('date: needs a date (2026-11-01 or Jalali 1405-08-10), not a date-time');
      continue;
    }
    const [open, high, low, close] = record.slice(2, 6) as [string, string, string, string];
    const bad = DAILY_COLUMNS.slice(2).findIndex((_, i) => !isPositiveDecimal(record[2 + i]!));
    if (bad >= 0) {
      fail(`${DAILY_COLUMNS[2 + bad]}: ${JSON.stringify(record[2 + bad]!.slice(0, 40))} is not a number above zero`);
      continue;
    }
    if ([open, low, close].some((v) => compareDecimal(v, high) > 0) || [open, close].some((v) => compareDecimal(v, low) < 0)) {
      fail('high must be the largest of open, high, low and close, and low the smallest');
      continue;
    }
    const pointsText = record[6];
    if (pointsText !== undefined && !/^\d{1,9}$/.test(pointsText)) {
      fail(`points: ${JSON.stringify(pointsText.slice(0, 20))} is not a whole number`);
      continue;
    }
    const start = buckets.startOfDate(...when.day);
    if (start >= today) {
      fail('date: is today or later; today belongs to the live recording');
      continue;
    }
    const id = `${reference.key} ${start}`;
    if (seenDays.has(id)) {
      fail(`the same reference and date as line ${seenDays.get(id)}`);
      continue;
    }
    seenDays.set(id, line);
    const end = buckets.next(start, '1d');
    days.push({ reference: reference.key, candle: { start, open, high, low, close, points: Number(pointsText ?? 0), source: IMPORT_SOURCE, closeAt: end - 1000 } });
  }
  if (problems.length > 0) throw new ImportError(problems);
  const rows = records.length - 1;
  return daily ? { format: 'daily', rows, days } : { format: 'points', rows, points };
}

/**
 * Write a checked file in one transaction, so nothing is half imported.
 * An import fills history in; it never rewrites what was served: a stored
 * candle of a recorded value is kept, and only an imported one (or none) is
 * replaced by the file's. Hourly and daily candles of a `key,time,value`
 * file are rebuilt from the minute candles where those are kept and make up
 * the whole stored candle, so recorded and imported minutes of one hour
 * combine. Importing the same file again writes the same candles: nothing
 * changes.
 */
export async function applyImport(parsed: ParsedImport, repository: HistoryRepository, buckets: Buckets, minuteRetentionStart: number): Promise<ImportSummary> {
  const summary: ImportSummary = { format: parsed.format, rows: parsed.rows, candles: { minute: 0, hour: 0, day: 0 }, kept: 0 };
  await repository.transaction(async (store) => {
    const write = async (grain: Grain, reference: string, candle: Candle) => {
      await store.writeRows([{ grain, reference, candle }]);
      summary.candles[grain]++;
    };
    /** The file's candle where the stored one is absent or imported; a recorded one stays. */
    const fill = async (grain: Grain, reference: string, candle: Candle) => {
      const stored = await storedAt(store, grain, reference, candle.start);
      if (stored && stored.source !== IMPORT_SOURCE) summary.kept++;
      else await write(grain, reference, candle);
    };
    if (parsed.format === 'daily') {
      for (const { reference, candle } of parsed.days) await fill('day', reference, candle);
    } else {
      for (const [reference, list] of parsed.points) {
        // In time order; values of the same time keep the file's order.
        list.sort((a, b) => a.at - b.at);
        const minutes = minuteCandles(list, buckets);
        const rollups = (['hour', 'day'] as const).map((grain) => ({ grain, candles: rollUp(minutes, buckets.bucketer(INTERVAL_OF[grain])) }));
        // Before the minutes change: which stored rollups are made of their minutes alone.
        const rebuild = new Set<Candle>();
        for (const { grain, candles } of rollups) {
          for (const candle of candles) {
            if (candle.start < minuteRetentionStart) continue;
            const stored = await storedAt(store, grain, reference, candle.start);
            const inside = await store.range('minute', reference, candle.start, buckets.next(candle.start, INTERVAL_OF[grain]));
            if (!stored || stored.points === inside.reduce((sum, m) => sum + m.points, 0)) rebuild.add(candle);
          }
        }
        for (const candle of minutes) if (candle.start >= minuteRetentionStart) await fill('minute', reference, candle);
        for (const { grain, candles } of rollups) {
          for (const candle of candles) {
            if (!rebuild.has(candle)) {
              await fill(grain, reference, candle);
              continue;
            }
            const inside = await store.range('minute', reference, candle.start, buckets.next(candle.start, INTERVAL_OF[grain]));
            await write(grain, reference, rollUp(inside, () => candle.start)[0]!);
          }
        }
      }
    }
    await store.bumpRevision();
  });
  return summary;
}

async function storedAt(store: HistoryRepository, grain: Grain, reference: string, start: number): Promise<Candle | undefined> {
  return (await store.range(grain, reference, start, start + 1))[0];
}

/** Points in time order into minute candles. */
function minuteCandles(points: Point[], buckets: Buckets): Candle[] {
  const out: Candle[] = [];
  let current: Candle | null = null;
  for (const { at, value } of points) {
    const start = buckets.start(at, '1m');
    if (current && current.start === start) addPoint(current, value, IMPORT_SOURCE, at);
    else out.push((current = candleOf(start, value, IMPORT_SOURCE, at)));
  }
  return out;
}

function sameColumns(header: string[], columns: string[]): boolean {
  return header.length === columns.length && header.every((name, i) => name === columns[i]);
}
