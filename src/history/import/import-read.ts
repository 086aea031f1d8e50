import type { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { Candle } from '../../domain/candle.js';
import { compareDecimal, isPositiveDecimal } from '../../domain/decimal.js';
import type { Buckets } from '../ranges/buckets.js';
import { readTimeInput } from '../ranges/range-query.js';

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

/** A value served at a time, as a `key,time,value` row gives it. */
export interface Point {
  at: number;
  value: string;
}

/** A checked file, ready to write. */
export type ParsedImport =
  | { format: 'points'; rows: number; points: Map<string, Point[]> }
  | { format: 'daily'; rows: number; days: { reference: string; candle: Candle }[] };

/** Rows read so far are reported every this many rows. */
const ROWS_PER_REPORT = 5000;

/**
 * Read a CSV of `key,time,value` (values served at a time) or
 * `key,date,open,high,low,close[,points]` (daily candles), with a header
 * row, as it streams in. Every line is checked before anything is written;
 * every bad line is reported with its number. Keys may be aliases; values are
 * decimals above zero, kept as written; times need an offset; dates may be
 * Jalali. Rows from today (in the zone) on are refused: today belongs to the
 * live recording. `onRowsRead` hears the count now and then, and at the end.
 * An error of `input` itself (an unreadable file) is thrown as it is.
 */
export async function readImport(input: Readable, catalogue: Catalogue, buckets: Buckets, now: number, onRowsRead: (rows: number) => void = () => {}): Promise<ParsedImport> {
  const parser = parse({ bom: true, info: true, skip_empty_lines: true, trim: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] });
  // pipe() does not pass the source's errors on: the parser ends with them, and they are told apart below.
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  const problems: { line: number; message: string }[] = [];
  let checker: ReturnType<typeof rowChecker> | null = null;
  let count = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!checker) {
        checker = rowChecker(record, info.lines, problems, catalogue, buckets, now);
        continue;
      }
      checker.check(record, info.lines);
      if (++count % ROWS_PER_REPORT === 0) onRowsRead(count);
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    problems.push({ line: (error as CsvError & { lines?: number }).lines ?? 0, message: `not readable as CSV: ${error.message.split('\n')[0]}` });
  } finally {
    // A bad header ends the reading early: let the file go.
    input.destroy();
  }
  onRowsRead(count);
  if (problems.length > 0) throw new ImportError(problems);
  if (!checker) throw new ImportError([{ line: 1, message: 'the file is empty' }]);
  return checker.result(count);
}

/** The checks of the rows under `headerRecord`, and what they add up to; a bad header is an ImportError. */
function rowChecker(
  headerRecord: string[],
  headerLine: number,
  problems: { line: number; message: string }[],
  catalogue: Catalogue,
  buckets: Buckets,
  now: number,
): { check: (record: string[], line: number) => void; result: (rows: number) => ParsedImport } {
  const header = headerRecord.map((cell) => cell.toLowerCase());
  const daily = sameColumns(header, DAILY_COLUMNS) || sameColumns(header, [...DAILY_COLUMNS, 'points']);
  if (!daily && !sameColumns(header, POINT_COLUMNS)) {
    throw new ImportError([{ line: headerLine, message: `the header must be "${POINT_COLUMNS.join(',')}" or "${DAILY_COLUMNS.join(',')}" (optionally ",points"), got "${header.join(',')}"` }]);
  }
  const today = buckets.start(now, '1d');
  const points = new Map<string, Point[]>();
  const days: { reference: string; candle: Candle }[] = [];
  const seenDays = new Map<string, number>();

  const check = (record: string[], line: number): void => {
    const fail = (message: string) => void problems.push({ line, message });
    if (record.length !== header.length) return fail(`expected ${header.length} columns, got ${record.length}`);
    const reference = catalogue.lookup(record[0]!);
    if (!reference) return fail(`unknown reference key ${JSON.stringify(record[0]!.slice(0, 64))}`);
    const when = readTimeInput(record[1]!);
    if ('error' in when) return fail(`${header[1]}: ${when.error}`);
    if (!daily) {
      if (!('instant' in when)) return fail('time: needs a date-time with an offset (2026-11-01T10:00:00+03:30), not a date');
      const value = record[2]!;
      if (!isPositiveDecimal(value)) return fail(`value: ${JSON.stringify(value.slice(0, 40))} is not a number above zero`);
      if (when.instant >= today) return fail('time: lies today or later; today belongs to the live recording');
      let list = points.get(reference.key);
      if (!list) points.set(reference.key, (list = []));
      list.push({ at: when.instant, value });
      return;
    }
    if (!('day' in when)) return fail('date: needs a date (2026-11-01, or Jalali 1405/08/10 or 1405-08-10), not a date-time');
    const [open, high, low, close] = record.slice(2, 6) as [string, string, string, string];
    const bad = DAILY_COLUMNS.slice(2).findIndex((_, i) => !isPositiveDecimal(record[2 + i]!));
    if (bad >= 0) return fail(`${DAILY_COLUMNS[2 + bad]}: ${JSON.stringify(record[2 + bad]!.slice(0, 40))} is not a number above zero`);
    if ([open, low, close].some((v) => compareDecimal(v, high) > 0) || [open, close].some((v) => compareDecimal(v, low) < 0)) return fail('high must be the largest of open, high, low and close, and low the smallest');
    const pointsText = record[6];
    if (pointsText !== undefined && !/^\d{1,9}$/.test(pointsText)) return fail(`points: ${JSON.stringify(pointsText.slice(0, 20))} is not a whole number`);
    const start = buckets.startOfDate(...when.day);
    if (start >= today) return fail('date: is today or later; today belongs to the live recording');
    const id = `${reference.key} ${start}`;
    if (seenDays.has(id)) return fail(`the same reference and date as line ${seenDays.get(id)}`);
    seenDays.set(id, line);
    const end = buckets.next(start, '1d');
    days.push({ reference: reference.key, candle: { start, open, high, low, close, points: Number(pointsText ?? 0), source: IMPORT_SOURCE, closeAt: end - 1000 } });
  };
  return { check, result: (rows) => (daily ? { format: 'daily', rows, days } : { format: 'points', rows, points }) };
}

function sameColumns(header: string[], columns: string[]): boolean {
  return header.length === columns.length && header.every((name, i) => name === columns[i]);
}
