import { createReadStream } from 'node:fs';
import type { Buckets } from '../history/ranges/buckets.js';
import { ImportError, readImport } from '../history/import/import-read.js';
import { applyImport, writtenCandles, type ImportProgress, type ImportSummary } from '../history/import/import-write.js';
import type { HistoryReader } from '../history/history-reader.js';
import type { CliContext } from './context.js';
import { printJson, UsageError } from './output.js';
import { perSecond, ProgressLine } from './progress.js';

/** Bad lines printed before the rest are only counted. */
const MAX_REPORTED_LINES = 100;
/** Off a terminal, a progress line this often. */
const DEFAULT_PROGRESS_MS = 5000;
/** The exit code of a command ended by SIGINT, as shells report it. */
const INTERRUPTED_EXIT_CODE = 130;

/**
 * `nerkh history import <file>`: read and check the whole file, then write
 * it, with progress on stderr and one summary line (or JSON) on stdout.
 * Ctrl-C while writing stops after the transaction under way, says how far
 * the import came, and exits 130; what was written stays.
 */
export async function importHistory(context: CliContext, history: { reader: HistoryReader; buckets: Buckets }, file: string, options: { progressMs: number | null; json: boolean }): Promise<void> {
  const { reader, buckets } = history;
  const progress = new ProgressLine(process.stderr, options.progressMs, DEFAULT_PROGRESS_MS);
  const now = context.time.now();
  const started = performance.now();
  let parsed;
  try {
    const rowsRead = (rows: number) => progress.update(() => `nerkh: ${file}: ${rows} rows read (${perSecond(rows, performance.now() - started)} rows/s)`);
    parsed = await readImport(createReadStream(file), context.catalogue, buckets, now, rowsRead);
  } catch (error) {
    progress.end();
    if ((error as NodeJS.ErrnoException).syscall !== undefined) throw new UsageError(`cannot read ${file}`);
    if (!(error instanceof ImportError)) throw error;
    for (const problem of error.problems.slice(0, MAX_REPORTED_LINES)) console.error(`nerkh: ${file} line ${problem.line}: ${problem.message}`);
    if (error.problems.length > MAX_REPORTED_LINES) console.error(`nerkh: … and ${error.problems.length - MAX_REPORTED_LINES} more bad lines`);
    throw new UsageError(`${file}: ${error.message}`);
  }

  const writing = performance.now();
  let done: ImportProgress = { rows: parsed.rows, rowsDone: 0, written: 0 };
  const onProgress = (state: ImportProgress) => {
    done = state;
    progress.update(() => `nerkh: ${file}: ${state.rowsDone} of ${state.rows} rows imported, ${state.written} candles written (${perSecond(state.rowsDone, performance.now() - writing)} rows/s)`);
  };
  const stoppedAt = (why: string) => `nerkh: ${file}: ${why} after ${done.rowsDone} of ${done.rows} rows (${done.written} candles written, and they stay); importing the file again finishes it`;
  // Only the first Ctrl-C waits for the transaction under way; a second one ends the process as usual.
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort();
  process.once('SIGINT', onInterrupt);
  let summary;
  try {
    summary = await applyImport(parsed, context.store.history, buckets, { minuteRetentionStart: reader.minuteRetentionStart(now), onProgress, signal: interrupt.signal });
  } catch (error) {
    progress.end();
    console.error(stoppedAt('stopped'));
    throw error;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  progress.end();
  if (interrupt.signal.aborted && done.rowsDone < done.rows) {
    console.error(stoppedAt('interrupted'));
    process.exitCode = INTERRUPTED_EXIT_CODE;
    return;
  }
  const ms = performance.now() - started;
  if (options.json) printJson({ ...summary, changed: writtenCandles(summary), seconds: Math.round(ms) / 1000 });
  else console.log(describeImport(summary, file, ms));
}

/** `--progress <seconds>` in milliseconds; null when not given. */
export function progressInterval(text: string | undefined): number | null {
  if (text === undefined) return null;
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds < 0 || seconds > 86_400) throw new UsageError(`invalid --progress "${text}": seconds from 0 (none) to 86400`);
  return Math.round(seconds * 1000);
}

/** The summary line: what changed, by grain, and what was already there. */
function describeImport(summary: ImportSummary, file: string, ms: number): string {
  const { minute, hour, day } = summary.candles;
  const sum = (pick: (counts: { added: number; updated: number; unchanged: number }) => number) => pick(minute) + pick(hour) + pick(day);
  const present = sum((c) => c.unchanged);
  const kept = summary.kept > 0 ? `; ${summary.kept} recorded candles kept as they were` : '';
  const took = `in ${(ms / 1000).toFixed(1)} s${ms >= 1000 ? ` (${perSecond(summary.rows, ms)} rows/s)` : ''}`;
  if (writtenCandles(summary) === 0) return `read ${summary.rows} rows from ${file} ${took}: nothing changed (${present} candles already present${kept})`;
  const written = (c: { added: number; updated: number }) => c.added + c.updated;
  return (
    `imported ${summary.rows} rows from ${file} ${took}: ${written(minute)} minute, ${written(hour)} hourly and ${written(day)} daily candles written ` +
    `(${sum((c) => c.added)} new, ${sum((c) => c.updated)} updated)${present > 0 ? `; ${present} already present` : ''}${kept}`
  );
}
