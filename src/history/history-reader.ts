import type { Candle, Grain } from '../domain/candle.js';
import { ApiError } from '../domain/errors.js';
import type { HistoryRepository, StoreLocation } from '../store/candle-tables.js';
import { WorkerFailedError } from '../threads/pool.js';
import type { StoreHealth } from '../store/health.js';
import { BLOCK_CACHE_BOUNDS, type BlockCacheBounds } from './ranges/block-cache.js';
import { INTERVAL_OF, type Buckets, type Interval } from './ranges/buckets.js';
import { RangeRenderer, type CandleSource, type RenderedCandles } from './ranges/range-render.js';
import { StoredActivity } from './record/activity.js';
import type { HistoryRecorder } from './record/recorder.js';
import { StoredNewest, type RecordingState } from './record/recording-state.js';

export { candleFragment, StartTexts, type RenderedCandles } from './ranges/range-render.js';

const DAY_MS = 86_400_000;
/** How often the store's history revision is checked (an import in another process changes the past). */
const REVISION_CHECK_MS = 2_000;

/**
 * What a range of one reference is rendered from as of now, for a renderer
 * with a block cache of its own (a render worker): its cache must be
 * emptied when `generation` moves, and its open block kept only while
 * `liveVersion` (null: this process does not record) stays the same.
 */
export interface RangeFreshness {
  generation: number;
  liveVersion: number | null;
  /** The recorder's newest candles of the reference at a grain, laid over the stored ones. */
  recent(grain: Grain): Candle[];
}

/**
 * History queries: candles of any interval built from the stored grain below
 * it, and the value served at a moment. The recorder's newest candles (not
 * necessarily written yet) are laid over what the store returns, so a query
 * sees every value served up to now. A store that does not answer is a 503.
 *
 * Rendered candles are cached in blocks (see RangeRenderer), emptied when
 * the history revision moves (an import, a late batch) or the recorder
 * changes. Where history answers are rendered in worker threads, each has a
 * block cache of its own: `freshness` tells it what this one knows (the
 * generation of the cache, the recorder's version and newest candles).
 */
export class HistoryReader {
  private readonly renderer: RangeRenderer;
  /** Moves whenever the block cache is emptied (a new history revision, a new recorder): render workers empty theirs too. */
  private generation = 0;
  private revision = -1;
  private revisionCheckedAt = -Infinity;
  private readonly recorderOf: () => HistoryRecorder | null;
  private lastRecorder: HistoryRecorder | null = null;
  private readonly storedActivity: StoredActivity;
  private readonly storedNewest: StoredNewest;

  constructor(
    private readonly repository: HistoryRepository,
    readonly buckets: Buckets,
    private readonly health: StoreHealth,
    readonly minuteDays: number,
    recorder: HistoryRecorder | null | (() => HistoryRecorder | null) = null,
    cacheBounds: BlockCacheBounds = BLOCK_CACHE_BOUNDS,
  ) {
    this.renderer = new RangeRenderer(buckets, cacheBounds);
    this.storedActivity = new StoredActivity(repository, () => health.reachable);
    this.storedNewest = new StoredNewest(repository, () => health.reachable);
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
      this.clearBlocks();
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

  /**
   * Candle recording as this node sees it: the recorder's own last write where
   * this process records and has written, else the store's newest candle (read
   * in the background; null until the first read lands).
   */
  recording(now: number): RecordingState {
    const recorder = this.recorder;
    return {
      minuteDays: this.minuteDays,
      lastWritten: recorder?.lastWritten ?? this.storedNewest.value(now),
      recording: recorder !== null,
      pending: recorder?.backlog().pendingCandles ?? 0,
    };
  }

  /** Minute candles are kept from here on. */
  minuteRetentionStart(now: number): number {
    return now - this.minuteDays * DAY_MS;
  }

  /** A reference's candles of `interval` starting in [from, to), oldest first; empty intervals are absent. */
  candles(reference: string, interval: Interval, from: number, to: number): Promise<Candle[]> {
    return this.renderer.candles(this.source(reference), reference, interval, from, to);
  }

  /**
   * The same candles rendered as JSON for the history body, through the block
   * cache. `toman`: a rial reference's values divided by ten exactly
   * (`?unit=toman`); such blocks are cached beside the rial ones, each
   * rendered once.
   */
  async rendered(reference: string, interval: Interval, from: number, to: number, now: number, toman = false): Promise<RenderedCandles> {
    await this.checkRevision(now);
    return this.renderer.rendered(this.source(reference), reference, interval, from, to, now, toman);
  }

  /**
   * What a render worker needs to render a range of `reference` as this
   * process sees it now (the revision checked first, as `rendered` does).
   * A store known to be away fails at once.
   */
  async freshness(reference: string, now: number): Promise<RangeFreshness> {
    await this.checkRevision(now);
    if (!this.health.reachable) throw unavailable();
    const recorder = this.recorder;
    return { generation: this.generation, liveVersion: recorder?.version(reference) ?? null, recent: (grain) => recorder?.recent(reference, grain) ?? [] };
  }

  /** Where the store's candles can be read from another thread; null: only through this process's repository. */
  get location(): StoreLocation | null {
    return this.repository.location;
  }

  /** Report a store failure met off this thread (a render worker's read): the store counts as down until its next ping. */
  storeFailed(error: unknown): void {
    this.health.failed(error, this.buckets.time.now());
  }

  /** The candles of a reference as the block cache reads them: the store's, with the recorder's newest laid over. */
  private source(reference: string): CandleSource {
    const recorder = this.recorder;
    return {
      stored: (grain, ref, from, to) => this.read(() => this.repository.range(grain, ref, from, to)),
      recent: (grain) => recorder?.recent(reference, grain) ?? [],
      liveVersion: recorder?.version(reference) ?? null,
    };
  }

  /**
   * The candle whose close stands for the value served at `at`: the last
   * candle that ended by `at`, so its close was recorded by then and never
   * after. A candle still open at `at` is used when its close was recorded
   * by `at` (its `closeAt`, the close's own time, is not after `at`), so
   * `?at=<now>` answers the value served now. Else, of the last minute, hour
   * and day candles that ended by `at`, the one that ended last (the finer on
   * a tie): minute candles where they are kept, else hourly ones, else daily
   * ones. Values are recorded when they change, so the last candle to end
   * before `at` holds the value still served at `at`. The grain it was read at goes with it, as the
   * answer names it (an invoice must show whether it holds a minute's close
   * or a day's).
   */
  async at(reference: string, at: number): Promise<{ candle: Candle; grain: Grain } | null> {
    const recent = (grain: Grain, latest: number, candle: Candle | null) => {
      for (const held of this.recorder?.recent(reference, grain) ?? []) if (held.start <= latest && (!candle || held.start >= candle.start)) candle = held;
      return candle;
    };
    // A candle has ended by `at` when it ends at `at` + 1 ms at the latest: its values were all served by `at`.
    const latestEnd = at + 1;
    // A candle still open at `at` stands for the value served then when its close was recorded by `at`: nothing came
    // after it until `at`, so `?at=<now>` answers the value served now. The finest grain kept decides.
    for (const grain of ['minute', 'hour', 'day'] as const) {
      const holding = recent(grain, at, await this.read(() => this.repository.lastAtOrBefore(grain, reference, at)));
      if (!holding) continue;
      if (this.buckets.next(holding.start, INTERVAL_OF[grain]) > latestEnd && holding.closeAt <= at) return { candle: holding, grain };
      break;
    }
    let best: { candle: Candle; grain: Grain } | null = null;
    let bestEnd = -Infinity;
    for (const grain of ['minute', 'hour', 'day'] as const) {
      const interval = INTERVAL_OF[grain];
      const latestStart = this.buckets.start(latestEnd, interval) - 1;
      const candle = recent(grain, latestStart, await this.read(() => this.repository.lastAtOrBefore(grain, reference, latestStart)));
      if (!candle) continue;
      const end = this.buckets.next(candle.start, interval);
      if (end > bestEnd) {
        best = { candle, grain };
        bestEnd = end;
      }
      // Hours and days end on minute boundaries: none can end later than the minute that ended last.
      if (grain === 'minute' && end === latestStart + 1) break;
    }
    return best;
  }

  /** Blocks and bytes the cache holds now (for tests and metrics). */
  get cached(): { blocks: number; bytes: number } {
    return this.renderer.cached;
  }

  private clearBlocks(): void {
    this.renderer.clear();
    this.generation++;
  }

  private async checkRevision(now: number): Promise<void> {
    if (now - this.revisionCheckedAt < REVISION_CHECK_MS) return;
    const revision = await this.read(() => this.repository.revision());
    this.revisionCheckedAt = now;
    if (revision !== this.revision) this.clearBlocks();
    this.revision = revision;
  }

  /** A store known to be away fails at once rather than hold the request for a connection timeout. */
  private async read<T>(query: () => Promise<T>): Promise<T> {
    if (!this.health.reachable) throw unavailable();
    try {
      return await query();
    } catch (error) {
      // A worker thread that died says nothing of the store: the request fails, the store stays reachable.
      if (error instanceof WorkerFailedError) throw workerFailed();
      this.health.failed(error, this.buckets.time.now());
      throw unavailable();
    }
  }
}

/** A worker thread failed while serving the request (the pool starts another): worth a retry at once. */
export function workerFailed(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'History could not be answered right now: the worker thread serving it failed. Retry; current rates are still served.', { 'retry-after': '1' });
}

export function unavailable(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'History is unavailable right now: the store does not answer. Current rates are still served.');
}
