import { rollUp, type Candle, type Grain, type StoredCandle } from '../../domain/candle.js';
import type { HistoryRepository } from '../../store/candle-tables.js';
import type { Buckets } from '../ranges/buckets.js';
import { planImport, type ImportDay } from './import-plan.js';
import { IMPORT_SOURCE, type ParsedImport } from './import-read.js';

/** What an import did to the candles of one grain. */
export interface GrainCounts {
  /** Candles the store did not have. */
  added: number;
  /** Stored candles that now read differently. */
  updated: number;
  /** Stored candles that already read as the file says. */
  unchanged: number;
}

export interface ImportSummary {
  format: 'points' | 'daily';
  rows: number;
  candles: Record<Grain, GrainCounts>;
  /** Recorded candles left as they were: a value the service recorded is never replaced. */
  kept: number;
}

/** How far the writing has come: reported after each transaction. */
export interface ImportProgress {
  rows: number;
  rowsDone: number;
  /** Candles added or updated so far. */
  written: number;
}

export interface ImportOptions {
  /** Minute candles before this are not kept, and the hours and days before it are the file's own. */
  minuteRetentionStart: number;
  onProgress?: (progress: ImportProgress) => void;
  /** Once aborted, no further transaction begins: the import returns what it has done. */
  signal?: AbortSignal;
}

/** Candles in the first transaction, before the store's pace is known. */
const FIRST_CHUNK_CANDLES = 1000;
/** Bounds on candles per transaction, whatever the pace seen (one reference's day always goes whole). */
const MIN_CHUNK_CANDLES = 100;
const MAX_CHUNK_CANDLES = 20_000;

/** Candles added or updated in `summary`. */
export function writtenCandles(summary: ImportSummary): number {
  return Object.values(summary.candles).reduce((sum, counts) => sum + counts.added + counts.updated, 0);
}

/**
 * Write a checked file in transactions of whole reference-days, each sized to
 * take about as long as the store's bulk pace allows (a server on the same
 * SQLite file gets its writes in between, and its readers never wait). An
 * import stopped halfway keeps the days written; importing the file again
 * finishes it.
 *
 * An import fills history in; it never rewrites what was served: a stored
 * candle of a recorded value is kept, and only an imported one (or none) is
 * replaced by the file's. Hourly and daily candles of a `key,time,value`
 * file are rebuilt from the minute candles where those are kept and make up
 * the whole stored candle, so recorded and imported minutes of one hour
 * combine. Only candles that read differently are written, and counted as
 * such: importing the same file again writes nothing.
 */
export async function applyImport(parsed: ParsedImport, repository: HistoryRepository, buckets: Buckets, options: ImportOptions): Promise<ImportSummary> {
  const days = planImport(parsed, buckets);
  const summary: ImportSummary = { format: parsed.format, rows: parsed.rows, candles: { minute: zero(), hour: zero(), day: zero() }, kept: 0 };
  const targetMs = repository.bulkTransactionMs;
  let size = FIRST_CHUNK_CANDLES;
  let rowsDone = 0;
  for (let next = 0; next < days.length && !options.signal?.aborted; ) {
    const chunk: ImportDay[] = [];
    let candles = 0;
    while (next < days.length && (chunk.length === 0 || candles + candlesOf(days[next]!) <= size)) {
      candles += candlesOf(days[next]!);
      chunk.push(days[next++]!);
    }
    let took = 0;
    const outcome = await repository.bulkTransaction(async (store) => {
      const began = performance.now();
      const written = await writeChunk(store, chunk, buckets, options.minuteRetentionStart);
      took = performance.now() - began;
      return written;
    });
    add(summary, outcome);
    // The next chunk sized to the pace just seen, halfway from this one's size to damp a slow moment.
    const fits = (candles * targetMs) / Math.max(took, 1);
    size = Math.min(MAX_CHUNK_CANDLES, Math.max(MIN_CHUNK_CANDLES, Math.round((size + fits) / 2)));
    for (const day of chunk) rowsDone += day.rows;
    options.onProgress?.({ rows: parsed.rows, rowsDone, written: writtenCandles(summary) });
  }
  return summary;
}

function zero(): GrainCounts {
  return { added: 0, updated: 0, unchanged: 0 };
}

function candlesOf(day: ImportDay): number {
  return day.minutes.length + day.hours.length + 1;
}

function add(summary: ImportSummary, outcome: Pick<ImportSummary, 'candles' | 'kept'>): void {
  for (const grain of ['minute', 'hour', 'day'] as const) {
    const into = summary.candles[grain];
    const from = outcome.candles[grain];
    into.added += from.added;
    into.updated += from.updated;
    into.unchanged += from.unchanged;
  }
  summary.kept += outcome.kept;
}

/**
 * One transaction: read what is stored where the chunk's days lie (one range
 * per reference and grain), decide candle by candle, and write only what
 * changes, with the history revision bumped so readers look again.
 */
async function writeChunk(store: HistoryRepository, chunk: ImportDay[], buckets: Buckets, retentionStart: number): Promise<Pick<ImportSummary, 'candles' | 'kept'>> {
  const outcome = { candles: { minute: zero(), hour: zero(), day: zero() }, kept: 0 };
  const rows: StoredCandle[] = [];
  for (let first = 0; first < chunk.length; ) {
    const reference = chunk[first]!.reference;
    let end = first;
    while (end < chunk.length && chunk[end]!.reference === reference) end++;
    const days = chunk.slice(first, end);
    first = end;
    const from = Math.min(...days.map((day) => day.start));
    const to = buckets.next(Math.max(...days.map((day) => day.start)), '1d');
    // A daily file touches day candles only; minutes matter only where they are kept.
    const pointsFile = days[0]!.minutes.length > 0;
    const stored = {
      minute: pointsFile && to > retentionStart ? await store.range('minute', reference, Math.max(from, retentionStart), to) : [],
      hour: byStart(pointsFile ? await store.range('hour', reference, from, to) : []),
      day: byStart(await store.range('day', reference, from, to)),
    };

    /** Write `candle` over `before` unless that reads the same already; returns what the store now holds. */
    const put = (grain: Grain, candle: Candle, before: Candle | undefined): Candle => {
      const counts = outcome.candles[grain];
      if (before && sameCandle(before, candle)) {
        counts.unchanged++;
        return before;
      }
      if (before) counts.updated++;
      else counts.added++;
      rows.push({ grain, reference, candle });
      return candle;
    };
    /** The file's candle, unless the stored one is recorded: that one stays. */
    const fillOver = (grain: Grain, candle: Candle, before: Candle | undefined): Candle => {
      if (before && before.source !== IMPORT_SOURCE) {
        outcome.kept++;
        return before;
      }
      return put(grain, candle, before);
    };

    let storedMinute = 0;
    for (const day of days) {
      if (!pointsFile) {
        fillOver('day', day.daily, stored.day.get(day.start));
        continue;
      }
      const dayEnd = buckets.next(day.start, '1d');
      const minutes = new Map<number, Candle>();
      while (storedMinute < stored.minute.length && stored.minute[storedMinute]!.start < dayEnd) {
        const candle = stored.minute[storedMinute++]!;
        if (candle.start >= day.start) minutes.set(candle.start, candle);
      }
      // Before the minutes change: which stored rollups are made of their minutes alone, and so are rebuilt from them.
      const sums = pointsPer(minutes, buckets);
      const rebuilt = (grain: 'hour' | 'day', candle: Candle) => {
        if (candle.start < retentionStart) return false;
        const before = stored[grain].get(candle.start);
        return !before || before.points === (sums.get(`${grain} ${candle.start}`) ?? 0);
      };
      const rebuildHours = new Set(day.hours.filter((hour) => rebuilt('hour', hour)).map((hour) => hour.start));
      const rebuildDay = rebuilt('day', day.daily);

      for (const minute of day.minutes) {
        if (minute.start < retentionStart) continue;
        minutes.set(minute.start, fillOver('minute', minute, minutes.get(minute.start)));
      }
      const all = [...minutes.values()].sort((a, b) => a.start - b.start);
      const hoursOfMinutes = byStart(rollUp(all, buckets.bucketer('1h')));
      for (const hour of day.hours) {
        const before = stored.hour.get(hour.start);
        if (rebuildHours.has(hour.start)) put('hour', hoursOfMinutes.get(hour.start)!, before);
        else fillOver('hour', hour, before);
      }
      const before = stored.day.get(day.start);
      if (rebuildDay) put('day', rollUp(all, () => day.start)[0]!, before);
      else fillOver('day', day.daily, before);
    }
  }
  if (rows.length > 0) {
    await store.writeRows(rows);
    await store.bumpRevision();
  }
  return outcome;
}

/** Points of the minutes per hour and for the day, keyed `hour <start>` and `day <start>`. */
function pointsPer(minutes: Map<number, Candle>, buckets: Buckets): Map<string, number> {
  const sums = new Map<string, number>();
  const hourOf = buckets.bucketer('1h');
  const dayOf = buckets.bucketer('1d');
  for (const { start, points } of minutes.values()) {
    for (const key of [`hour ${hourOf(start)}`, `day ${dayOf(start)}`]) sums.set(key, (sums.get(key) ?? 0) + points);
  }
  return sums;
}

function byStart(candles: Candle[]): Map<number, Candle> {
  return new Map(candles.map((candle) => [candle.start, candle]));
}

function sameCandle(a: Candle, b: Candle): boolean {
  return a.start === b.start && a.open === b.open && a.high === b.high && a.low === b.low && a.close === b.close && a.points === b.points && a.source === b.source && a.closeAt === b.closeAt;
}
