import { candleInToman, rollUp, type Candle } from '../domain/candle.js';
import { ApiError } from '../domain/errors.js';
import { combineHash, fnv1a } from '../domain/hash.js';
import type { StoreHealth } from '../store/health.js';
import type { Grain, HistoryRepository } from '../store/history.js';
import { BlockCache, type CandleBlock } from './block-cache.js';
import { GRAIN_OF, INTERVAL_OF, nominalMs, type Buckets, type Interval } from './buckets.js';
import { StoredActivity } from './activity.js';
import type { HistoryRecorder } from './recorder.js';

const DAY_MS = 86_400_000;
/** Candles per cached block (nominal): a 1,000-candle range touches four or five blocks, so a miss reads little beyond it. */
const BLOCK_CANDLES = 250;
/** A block that ended this long ago is settled: every candle in it has been written. */
const SETTLED_MS = 60_000;
/** How often the store's history revision is checked (an import in another process changes the past). */
const REVISION_CHECK_MS = 2_000;
/** Rendered candles kept in memory: some 40 MB. */
export const MAX_CACHED_CANDLES = 250_000;

/** Candles of a range as JSON, ready to put in a body. */
export interface RenderedCandles {
  /** The candle objects joined by commas (no brackets). */
  json: string;
  count: number;
  /** Changes whenever the candles do. */
  hash: number;
}

/**
 * History queries: candles of any interval built from the stored grain below
 * it, and the value served at a moment. The recorder's newest candles (not
 * necessarily written yet) are laid over what the store returns, so a query
 * sees every value served up to now. A store that does not answer is a 503.
 *
 * Rendered candles are cached in blocks of about 500: a block of the settled
 * past until the history revision moves (an import, a late batch); the block
 * still open until the recorder records a new value of its reference (a
 * process that does not record reads it afresh every time).
 */
export class HistoryReader {
  private readonly cache: BlockCache;
  private revision = -1;
  private revisionCheckedAt = -Infinity;
  private readonly recorderOf: () => HistoryRecorder | null;
  private lastRecorder: HistoryRecorder | null = null;
  private readonly storedActivity: StoredActivity;

  constructor(
    private readonly repository: HistoryRepository,
    readonly buckets: Buckets,
    private readonly health: StoreHealth,
    readonly minuteDays: number,
    recorder: HistoryRecorder | null | (() => HistoryRecorder | null) = null,
    maxCachedCandles = MAX_CACHED_CANDLES,
  ) {
    this.cache = new BlockCache(maxCachedCandles);
    this.storedActivity = new StoredActivity(repository, () => health.reachable);
    this.recorderOf = typeof recorder === 'function' ? recorder : () => recorder;
  }

  /**
   * The recorder of this process now: with several nodes only the ingest
   * leader records, and each spell of leadership has a recorder of its own.
   * Its versions start again at 0, so a change of recorder empties the cache.
   */
  private get recorder(): HistoryRecorder | null {
    const recorder = this.recorderOf();
    if (recorder !== this.lastRecorder) {
      this.lastRecorder = recorder;
      this.cache.clear();
    }
    return recorder;
  }

  /**
   * A source's values served per ten minutes over the last six hours (oldest
   * first): the recorder's own counts where this process records, else the
   * store's (read in the background, null until the first read lands).
   */
  activity(source: string, now: number): number[] | null {
    return this.recorder ? this.recorder.activity.series(source, now) : this.storedActivity.series(source, now);
  }

  /** Minute candles are kept from here on. */
  minuteRetentionStart(now: number): number {
    return now - this.minuteDays * DAY_MS;
  }

  /** A reference's candles of `interval` starting in [from, to), oldest first; empty intervals are absent. */
  async candles(reference: string, interval: Interval, from: number, to: number): Promise<Candle[]> {
    const grain = GRAIN_OF[interval];
    const stored = await this.read(() => this.repository.range(grain, reference, from, to));
    const rows = this.recorder ? overlay(stored, this.recorder.recent(reference, grain), from, to) : stored;
    if (interval === INTERVAL_OF[grain]) return rows;
    return rollUp(rows, this.buckets.bucketer(interval));
  }

  /**
   * The same candles rendered as JSON for the history body, through the block
   * cache. `toman`: a rial reference's values divided by ten exactly
   * (`?unit=toman`); such blocks are cached beside the rial ones, each
   * rendered once.
   */
  async rendered(reference: string, interval: Interval, from: number, to: number, now: number, toman = false): Promise<RenderedCandles> {
    await this.checkRevision(now);
    const span = nominalMs(interval) * BLOCK_CANDLES;
    const parts: string[] = [];
    let count = 0;
    let hash = fnv1a(`${reference} ${interval} ${from} ${to}${toman ? ' toman' : ''}`);
    for (let blockStart = Math.floor(from / span) * span; blockStart < to; blockStart += span) {
      const block = await this.block(reference, interval, blockStart, blockStart + span, now, toman);
      const first = lowerBound(block.starts, from);
      const end = lowerBound(block.starts, to);
      if (end > first) {
        // One slice of the block's text per block: no string per candle is made or joined.
        parts.push(first === 0 && end === block.starts.length ? block.json : block.json.slice(first === 0 ? 0 : block.ends[first - 1]! + 1, block.ends[end - 1]));
        count += end - first;
      }
      hash = combineHash(hash, block.hash);
    }
    return { json: parts.join(','), count, hash };
  }

  /**
   * The candle whose close was being served at `at`: of the minute candle
   * holding `at` (or the last before it) and the last hourly and daily
   * candles that ended by `at`, the one that ended last (the finer one on a
   * tie). Where none is found, the hourly, then daily, candle holding `at`.
   * So the answer is exact to the minute where minute candles are kept, and
   * otherwise the close of the last hour (or day) that ended before `at`.
   */
  async at(reference: string, at: number): Promise<Candle | null> {
    const recent = (grain: Grain, latest: number, candle: Candle | null) => {
      for (const held of this.recorder?.recent(reference, grain) ?? []) if (held.start <= latest && (!candle || held.start >= candle.start)) candle = held;
      return candle;
    };
    const last = async (grain: Grain, latest: number) => recent(grain, latest, await this.read(() => this.repository.lastAtOrBefore(grain, reference, latest)));
    const candidates: [Candle | null, number][] = [];
    const minute = await last('minute', at);
    if (minute) candidates.push([minute, minute.start + 60_000]);
    for (const [grain, interval] of [['hour', '1h'], ['day', '1d']] as const) {
      // Ended by `at`: every value of a candle ending at `at` + 1 ms was served by `at`.
      const ended = await last(grain, this.buckets.start(at + 1, interval) - 1);
      if (ended) candidates.push([ended, this.buckets.next(ended.start, interval)]);
    }
    let best: Candle | null = null;
    let bestEnd = -Infinity;
    for (const [candle, end] of candidates) {
      if (end > bestEnd) {
        best = candle;
        bestEnd = end;
      }
    }
    return best ?? (await last('hour', at)) ?? (await last('day', at));
  }

  /** The rendered candles starting in [blockStart, blockEnd), cached while they cannot have changed. */
  private async block(reference: string, interval: Interval, blockStart: number, blockEnd: number, now: number, toman: boolean): Promise<CandleBlock> {
    const key = `${reference} ${interval} ${blockStart}${toman ? ' toman' : ''}`;
    // The candles starting in the block run from the first candle boundary in it to the end of the last candle starting in it.
    let first = this.buckets.start(blockStart, interval);
    if (first < blockStart) first = this.buckets.next(first, interval);
    const lastStart = this.buckets.start(blockEnd - 1, interval);
    const end = lastStart >= first ? this.buckets.next(lastStart, interval) : first;
    const settled = end <= now - SETTLED_MS;
    const liveVersion = settled ? null : (this.recorder?.version(reference) ?? null);
    const cached = this.cache.get(key);
    if (cached && (settled ? cached.liveVersion === null : liveVersion !== null && cached.liveVersion === liveVersion)) return cached;
    const candles = first < end ? await this.candles(reference, interval, first, end) : [];
    const texts = new StartTexts(this.buckets.time);
    const ends = new Array<number>(candles.length);
    let json = '';
    candles.forEach((candle, i) => {
      json += (i === 0 ? '' : ',') + texts.fragment(toman ? candleInToman(candle) : candle);
      ends[i] = json.length;
    });
    const block: CandleBlock = { starts: candles.map((c) => c.start), json, ends, hash: fnv1a(json), liveVersion };
    if (settled || liveVersion !== null) this.cache.set(key, block);
    else this.cache.delete(key);
    return block;
  }

  private async checkRevision(now: number): Promise<void> {
    if (now - this.revisionCheckedAt < REVISION_CHECK_MS) return;
    const revision = await this.read(() => this.repository.revision());
    this.revisionCheckedAt = now;
    if (revision !== this.revision) this.cache.clear();
    this.revision = revision;
  }

  /** A store known to be away fails at once rather than hold the request for a connection timeout. */
  private async read<T>(query: () => Promise<T>): Promise<T> {
    if (!this.health.reachable) throw unavailable();
    try {
      return await query();
    } catch (error) {
      this.health.failed(error, this.buckets.time.now());
      throw unavailable();
    }
  }
}

/** One candle of the history body: values are the served number text, written as is. */
export function candleFragment(candle: Candle, time: Buckets['time']): string {
  const t = time.format(candle.start);
  return `{"t":"${t}","t_jalali":"${time.jalaliDate(candle.start)} ${t.slice(11, 19)}","open":${candle.open},"high":${candle.high},"low":${candle.low},"close":${candle.close},"points":${candle.points}}`;
}

/**
 * `candleFragment` for a run of candles in time order: the date, zone offset
 * and Jalali date are made once per local day and offset, the clock by
 * arithmetic, so no Date or ISO text is made per candle (that cost more than
 * reading the candle).
 */
export class StartTexts {
  private day = NaN;
  private offset = NaN;
  private date = '';
  private zone = '';
  private jalali = '';

  constructor(private readonly time: Buckets['time']) {}

  fragment(candle: Candle): string {
    const ms = candle.start;
    const offset = this.time.offsetMinutes(ms);
    const local = ms + offset * 60_000;
    const day = Math.floor(local / DAY_MS);
    if (day !== this.day || offset !== this.offset) {
      const text = this.time.format(ms);
      this.date = text.slice(0, 10);
      this.zone = text.slice(19);
      this.jalali = this.time.jalaliDate(ms);
      this.day = day;
      this.offset = offset;
    }
    const seconds = Math.floor((local - day * DAY_MS) / 1000);
    const clock = `${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
    return `{"t":"${this.date}T${clock}${this.zone}","t_jalali":"${this.jalali} ${clock}","open":${candle.open},"high":${candle.high},"low":${candle.low},"close":${candle.close},"points":${candle.points}}`;
  }
}

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** The stored candles with the recorder's newest ones in place of (or after) their stored copies. */
function overlay(stored: Candle[], recent: Candle[], from: number, to: number): Candle[] {
  for (const candle of recent) {
    if (candle.start < from || candle.start >= to) continue;
    let i = stored.length;
    while (i > 0 && stored[i - 1]!.start > candle.start) i--;
    if (i > 0 && stored[i - 1]!.start === candle.start) stored[i - 1] = candle;
    else stored.splice(i, 0, candle);
  }
  return stored;
}

/** The first index whose value is at least `value` (the array ascending). */
function lowerBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function unavailable(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'History is unavailable right now: the store does not answer. Current rates are still served.');
}
