import Sqlite from 'better-sqlite3';
import type { Candle } from '../../domain/candle.js';
import { carryStoreError, type CarriedStoreError } from '../../store/errors.js';

/** One range read, as the pool hands it over. */
export interface RangeTask {
  kind?: 'range';
  file: string;
  table: string;
  reference: string;
  from: number;
  to: number;
}

/** The last candle starting at or before `at` (`?at=`). */
export interface LastTask {
  kind: 'last';
  file: string;
  table: string;
  reference: string;
  at: number;
}

type Row = [number, string, string, string, string, number, string, number];
const COLUMNS = 'start, open, high, low, close, points, source, close_at';

/**
 * Runs in a worker thread: reads candles from the SQLite file over this
 * thread's own read-only connection (WAL lets it read beside the server's
 * writes), so the synchronous driver blocks this thread, not the event loop.
 * Render workers read through the same functions.
 */
const connections = new Map<string, Sqlite.Database>();
const statements = new Map<string, Sqlite.Statement>();

function statement(file: string, table: string, kind: 'range' | 'last'): Sqlite.Statement {
  const key = `${file}\n${table}\n${kind}`;
  let prepared = statements.get(key);
  if (prepared) return prepared;
  let db = connections.get(file);
  if (!db) {
    db = new Sqlite(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    connections.set(file, db);
  }
  // `table` comes from the repository's own table names, never from a request.
  const text =
    kind === 'range'
      ? `select ${COLUMNS} from ${table} where reference = ? and start >= ? and start < ? order by start`
      : `select ${COLUMNS} from ${table} where reference = ? and start <= ? order by start desc limit 1`;
  prepared = db.prepare(text).raw(true);
  statements.set(key, prepared);
  return prepared;
}

function candleOf([start, open, high, low, close, points, source, closeAt]: Row): Candle {
  return { start, open, high, low, close, points, source, closeAt };
}

/** A range of candles from the SQLite file, on the calling thread (a worker's). */
export function readSqliteRange(file: string, table: string, reference: string, from: number, to: number): Candle[] {
  return (statement(file, table, 'range').all(reference, from, to) as Row[]).map(candleOf);
}

/** A store error comes back as a value, so the event loop can tell it from the worker itself failing. */
export default function readCandles(task: RangeTask | LastTask): Candle[] | Candle | null | CarriedStoreError {
  try {
    if (task.kind === 'last') {
      const row = statement(task.file, task.table, 'last').get(task.reference, task.at) as Row | undefined;
      return row ? candleOf(row) : null;
    }
    return readSqliteRange(task.file, task.table, task.reference, task.from, task.to);
  } catch (error) {
    return carryStoreError(error);
  }
}
