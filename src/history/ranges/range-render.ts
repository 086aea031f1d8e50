import { candleInToman, rollUp, type Candle, type Grain } from '../../domain/candle.js';
import { combineHash, fnv1a } from '../../domain/hash.js';
import { BLOCK_CACHE_BOUNDS, BlockCache, EMPTY_SETTLED_BLOCK, type BlockCacheBounds, type CandleBlock } from './block-cache.js';
import { GRAIN_OF, INTERVAL_OF, nominalMs, type Buckets, type Interval } from './buckets.js';

const DAY_MS = 86_400_000;
/** Candles per cached block (nominal): a 1,000-candle range touches four or five blocks, so a miss reads little beyond it. */
const BLOCK_CANDLES = 250;
/** A block that ended this long ago is settled: every candle in it has been written. */
export const SETTLED_MS = 60_000;

/** Candles of a range as JSON, ready to put in a body. */
export interface RenderedCandles {
  /** The candle objects joined by commas (no brackets). */
  json: string;
  count: number;
  /** Changes whenever the candles do. */
  hash: number;
}

/** Where a range's candles come from: the stored ones of a grain, and the recorder's newest ones laid over them. */
export interface CandleSource {
  /** A reference's stored candles with `from <= start < to`, oldest first. */
  stored(grain: Grain, reference: string, from: number, to: number): Promise<Candle[]>;
  /** The recorder's newest candles of the reference (none where this process does not record). */
  recent(grain: Grain): readonly Candle[];
  /** The recorder's version of the reference (changes with every value it records); null where it does not record. */
  liveVersion: number | null;
}

/**
 * Candles of a range rendered as JSON through a cache of 250-candle blocks:
 * a block of the settled past is kept until the cache is cleared (the
 * history revision moved), the block still open while the recorder's
 * version of its reference stays the same (a process that does not record
 * reads it afresh every time). A block starting after now is never kept: it
 * can hold nothing yet, and ranges moving through the future would
 * otherwise each add blocks. The cache is bounded in bytes and in blocks.
 *
 * The same class serves the event loop (a process without render workers)
 * and each render worker (its own cache, a share of the bounds).
 */
export class RangeRenderer {
  private readonly cache: BlockCache;

  constructor(
    private readonly buckets: Buckets,
    bounds: BlockCacheBounds = BLOCK_CACHE_BOUNDS,
  ) {
    this.cache = new BlockCache(bounds);
  }

  clear(): void {
    this.cache.clear();
  }

  /** Blocks and bytes the cache holds now (for tests and metrics). */
  get cached(): { blocks: number; bytes: number } {
    return { blocks: this.cache.size, bytes: this.cache.calculatedSize };
  }

  /** A reference's candles of `interval` starting in [from, to), oldest first; empty intervals are absent. */
  async candles(source: CandleSource, reference: string, interval: Interval, from: number, to: number): Promise<Candle[]> {
    const grain = GRAIN_OF[interval];
    const stored = await source.stored(grain, reference, from, to);
    const rows = overlay(stored, source.recent(grain), from, to);
    if (interval === INTERVAL_OF[grain]) return rows;
    return rollUp(rows, this.buckets.bucketer(interval));
  }

  /**
   * The candles rendered as JSON for the history body. `toman`: a rial
   * reference's values divided by ten exactly (`?unit=toman`); such blocks
   * are cached beside the rial ones, each rendered once.
   */
  async rendered(source: CandleSource, reference: string, interval: Interval, from: number, to: number, now: number, toman = false): Promise<RenderedCandles> {
    const span = nominalMs(interval) * BLOCK_CANDLES;
    const parts: string[] = [];
    let count = 0;
    let hash = fnv1a(`${reference} ${interval} ${from} ${to}${toman ? ' toman' : ''}`);
    for (let blockStart = Math.floor(from / span) * span; blockStart < to; blockStart += span) {
      const block = await this.block(source, reference, interval, blockStart, blockStart + span, now, toman);
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

  /** The rendered candles starting in [blockStart, blockEnd), cached while they cannot have changed. */
  private async block(source: CandleSource, reference: string, interval: Interval, blockStart: number, blockEnd: number, now: number, toman: boolean): Promise<CandleBlock> {
    const key = `${reference} ${interval} ${blockStart}${toman ? ' toman' : ''}`;
    // The candles starting in the block run from the first candle boundary in it to the end of the last candle starting in it.
    let first = this.buckets.start(blockStart, interval);
    if (first < blockStart) first = this.buckets.next(first, interval);
    const lastStart = this.buckets.start(blockEnd - 1, interval);
    const end = lastStart >= first ? this.buckets.next(lastStart, interval) : first;
    const settled = end <= now - SETTLED_MS;
    const liveVersion = settled ? null : source.liveVersion;
    const cached = this.cache.get(key);
    if (cached && (settled ? cached.liveVersion === null : liveVersion !== null && cached.liveVersion === liveVersion)) return cached;
    const candles = first < end ? await this.candles(source, reference, interval, first, end) : [];
    const block = settled && candles.length === 0 ? EMPTY_SETTLED_BLOCK : this.render(candles, liveVersion, toman);
    if (blockStart <= now && (settled || liveVersion !== null)) this.cache.set(key, block);
    else this.cache.delete(key);
    return block;
  }

  private render(candles: readonly Candle[], liveVersion: number | null, toman: boolean): CandleBlock {
    const texts = new StartTexts(this.buckets.time);
    const ends = new Array<number>(candles.length);
    let json = '';
    candles.forEach((candle, i) => {
      json += (i === 0 ? '' : ',') + texts.fragment(toman ? candleInToman(candle) : candle);
      ends[i] = json.length;
    });
    return { starts: candles.map((c) => c.start), json, ends, hash: fnv1a(json), liveVersion };
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
function overlay(stored: Candle[], recent: readonly Candle[], from: number, to: number): Candle[] {
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
