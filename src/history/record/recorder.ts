import { addPoint, candleOf, GRAINS, mergeLater, type Candle, type Grain, type StoredCandle } from '../../domain/candle.js';
import type { ZoneTime } from '../../domain/time.js';
import type { DaySeed } from '../../live/market-day.js';
import type { Snapshot } from '../../live/snapshot.js';
import { FencedWriteError, type HistoryRepository } from '../../store/candle-tables.js';
import type { StoreHealth } from '../../store/health.js';
import { Buckets } from '../ranges/buckets.js';
import { SourceActivity } from './activity.js';

/** Candles changed since the last write go out this often: a crash loses at most this much (plus the write under way). */
export const FLUSH_MS = 1000;
const PRUNE_MS = 60_000;
const DAY_MS = 86_400_000;
/**
 * Minute candles held while the store is away: about ten hours of every
 * bundled reference changing every minute, some 30 MB. Past this the oldest
 * minute candles are dropped (and counted); hourly and daily candles are
 * always kept, so the rollups stay whole.
 */
const MAX_PENDING_MINUTES = 200_000;

/** What the recorder listens to: the engine. */
export interface SnapshotSource {
  current(): Snapshot;
  onSnapshot(listener: (snapshot: Snapshot) => void): void;
}

/** What the recorder holds unwritten, and what it had to drop: for `/metrics`. */
export interface HistoryBacklog {
  pendingCandles: number;
  droppedCandles: number;
  /** Seconds spent recording points and handing batches to the store (with SQLite, the whole write): what recording costs. */
  busySeconds: number;
}

/** One candle the recorder keeps, of one reference at one grain. */
interface Tracked {
  reference: string;
  grain: Grain;
  candle: Candle;
}

/** How a leader's writes are fenced: its lease epoch, and what to do when a newer leader has written. */
export interface RecorderFence {
  epoch: number;
  /** Called once, with the store's newer epoch, when a batch is refused; recording has stopped by then. */
  onRefused(fence: number): void;
}

/** The last value recorded for a reference, and the calendar day it was recorded in. */
interface LastPoint {
  value: string;
  source: string;
  updatedAt: number;
  day: string;
}

type Starts = Record<Grain, number>;

/**
 * Records every served value at one-minute grain, with hourly and daily
 * rollups kept alongside as values arrive. A point is a value served anew: a
 * change of value, source or update time, and the value still served at the
 * first snapshot of each calendar day, so every day with a value has a candle
 * and opens where the market day does.
 *
 * Changed candles are written whole (insert or replace) once a second, all
 * grains in one transaction, and on stop. While the store is away a batch
 * that failed is retried unchanged and newer changes wait behind it, bounded;
 * writing a whole candle twice changes nothing, so a retry is always safe.
 * Before its first write the recorder loads the candles stored for the
 * minute, hour and day it is in, so a restart continues them instead of
 * overwriting them. Nothing is written before `load()` is called: a
 * recorder started first (while something else writes the past, such as the
 * demo's first start) records in memory, and its load then puts the stored
 * candles first and what it recorded after them.
 */
export class HistoryRecorder {
  private readonly buckets: Buckets;
  /** Per reference: the newest candle of each grain (and the one before it, which may not be written yet). */
  private readonly open = new Map<string, Partial<Record<Grain, Tracked>>>();
  private readonly before = new Map<string, Partial<Record<Grain, Candle>>>();
  /** Per reference: bumped by every point, so a cache of its candles knows when to look again. */
  private readonly versions = new Map<string, number>();
  private readonly last = new Map<string, LastPoint>();
  private readonly dirty: Record<Grain, Set<Tracked>> = { minute: new Set(), hour: new Set(), day: new Set() };
  private unwritten: StoredCandle[] | null = null;
  /** The load asked for; null until then, and nothing is written meanwhile. */
  private loading: Promise<Map<string, DaySeed>> | null = null;
  /** Whether the load has run (well or not): until then the candles held here may not continue the stored ones yet. */
  private loaded = false;
  private seeded = false;
  private observedDay = '';
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private nextPrune = 0;
  private dropped = 0;
  private busyMs = 0;
  private newestWritten: number | null = null;
  private source: SnapshotSource | null = null;
  /** Set once a newer leader's fence refused a batch: nothing more is written. */
  private refused = false;
  readonly activity = new SourceActivity();

  constructor(
    private readonly repository: HistoryRepository,
    private readonly time: ZoneTime,
    private readonly health: StoreHealth,
    private readonly minuteDays: number,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly maxPendingMinutes = MAX_PENDING_MINUTES,
    /** null: writes are not fenced (a single process, tests of the recorder alone). */
    private readonly fence: RecorderFence | null = null,
  ) {
    this.buckets = new Buckets(time);
  }

  /**
   * Load what the store holds of the current minute, hour and day, and return
   * each reference's market day for the engine (with what this recorder has
   * already recorded today folded in). A store that fails here is tried again
   * before the first write; the market days then start empty. Once only: a
   * second call returns the first one's answer.
   */
  load(): Promise<Map<string, DaySeed>> {
    return (this.loading ??= this.loadOnce().finally(() => {
      this.loaded = true;
      // What `recent` shows has changed (candles now shown, or continued): caches of them look again.
      for (const reference of this.open.keys()) this.versions.set(reference, this.version(reference) + 1);
    }));
  }

  private async loadOnce(): Promise<Map<string, DaySeed>> {
    try {
      // A new leadership claims the fence before anything else, so a predecessor waking up is refused from now on.
      if (this.fence) await this.repository.claimFence(this.fence.epoch);
      return await this.seed(this.time.now());
    } catch (error) {
      if (error instanceof FencedWriteError) this.refuse(error);
      else this.onError(error);
      return new Map();
    }
  }

  /** The lease epoch this recorder's writes carry; null when they are not fenced. */
  get fenceEpoch(): number | null {
    return this.fence?.epoch ?? null;
  }

  /** Listen to the engine and start writing. */
  start(source: SnapshotSource): void {
    this.source = source;
    source.onSnapshot((snapshot) => this.observe(snapshot, snapshot.builtAt));
    this.observe(source.current(), this.time.now());
    this.timer = setInterval(() => this.tick(), FLUSH_MS);
    this.timer.unref();
  }

  /** Stop the timer and write everything still pending (loading first if that was never asked: the stored candles stay first). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.load();
    await this.flush();
  }

  /** Record the values of a snapshot served from `at` on. */
  observe(snapshot: Snapshot, at: number): void {
    if (this.refused) return;
    const began = performance.now();
    this.recordSnapshot(snapshot, at);
    this.busyMs += performance.now() - began;
  }

  private recordSnapshot(snapshot: Snapshot, at: number): void {
    const day = this.time.day(at);
    let starts: Starts | null = null;
    for (const [key, prepared] of snapshot.rates) {
      const { value, source, updated_at: updatedAt } = prepared.rate;
      if (value === null || source === null || updatedAt === null) continue;
      const last = this.last.get(key);
      if (last && last.day === day && last.value === value && last.source === source && last.updatedAt === updatedAt) continue;
      starts ??= this.startsAt(at);
      this.record(key, value, source, updatedAt, starts);
      this.last.set(key, { value, source, updatedAt, day });
      this.activity.count(source, at);
    }
    this.observedDay = day;
  }

  /**
   * The newest candles of a reference at a grain, oldest first, written or
   * not: queries lay them over what the store returns, so they see every
   * value served, also in the second before it is written.
   */
  recent(reference: string, grain: Grain): Candle[] {
    // Before the load the stored candles are what a query should see: those held here may be only their later part.
    if (!this.loaded) return [];
    const latest = this.open.get(reference)?.[grain]?.candle;
    const before = this.before.get(reference)?.[grain];
    return latest ? (before ? [before, latest] : [latest]) : [];
  }

  /** Changes whenever a value of the reference is recorded. */
  version(reference: string): number {
    return this.versions.get(reference) ?? 0;
  }

  backlog(): HistoryBacklog {
    const pending = this.dirty.minute.size + this.dirty.hour.size + this.dirty.day.size + (this.unwritten?.length ?? 0);
    return { pendingCandles: pending, droppedCandles: this.dropped, busySeconds: this.busyMs / 1000 };
  }

  /** When the newest value this recorder has written was recorded (the latest close it wrote); null before its first write. */
  get lastWritten(): number | null {
    return this.newestWritten;
  }

  private noteWritten(batch: readonly StoredCandle[]): void {
    for (const { candle } of batch) if (this.newestWritten === null || candle.closeAt > this.newestWritten) this.newestWritten = candle.closeAt;
  }

  /** Write what is pending; one flush at a time (a call during one runs after it). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    this.flushing = this.writePending().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private tick(): void {
    const now = this.time.now();
    // A new day opens with the values still served, even when no snapshot comes to say so.
    if (this.source && this.time.day(now) !== this.observedDay) this.observe(this.source.current(), now);
    if (!this.flushing) void this.flush();
  }

  private startsAt(at: number): Starts {
    return { minute: this.buckets.start(at, '1m'), hour: this.buckets.start(at, '1h'), day: this.buckets.start(at, '1d') };
  }

  private record(reference: string, value: string, source: string, updatedAt: number, starts: Starts): void {
    let open = this.open.get(reference);
    if (!open) this.open.set(reference, (open = {}));
    for (const grain of GRAINS) {
      let tracked = open[grain];
      // A clock stepping back keeps adding to the newest candle rather than replace an older one whole.
      if (tracked && tracked.candle.start >= starts[grain]) {
        addPoint(tracked.candle, value, source, updatedAt);
      } else {
        if (tracked) this.before.set(reference, { ...this.before.get(reference), [grain]: tracked.candle });
        tracked = { reference, grain, candle: candleOf(starts[grain], value, source, updatedAt) };
        open[grain] = tracked;
      }
      this.markDirty(tracked);
    }
    this.versions.set(reference, this.version(reference) + 1);
  }

  private markDirty(tracked: Tracked): void {
    const set = this.dirty[tracked.grain];
    if (set.has(tracked)) return;
    set.add(tracked);
    if (tracked.grain === 'minute' && set.size > this.maxPendingMinutes) {
      set.delete(set.values().next().value!);
      this.dropped++;
    }
  }

  private async writePending(): Promise<void> {
    // Before the load, what is recorded waits in memory: the stored candles must come first.
    if (this.loading === null) return;
    await this.loading;
    // A store known to be away is not written to; its ping brings it back.
    if (!this.health.reachable || this.refused) return;
    const now = this.time.now();
    try {
      if (!this.seeded) await this.seed(now);
      const retry = this.unwritten !== null;
      const began = performance.now();
      const batch = this.unwritten ?? this.cut();
      if (batch.length > 0) {
        this.unwritten = batch;
        // A batch held back by an outage lands in the settled past: readers' caches must look again.
        const written = this.repository.write(batch, retry, this.fence?.epoch ?? null);
        // What ran before the write's first wait: with SQLite (prepared statements, a synchronous driver) all of it.
        this.busyMs += performance.now() - began;
        await written;
        this.unwritten = null;
        this.noteWritten(batch);
        this.health.succeeded(now);
        // What waited behind a retried batch goes out now rather than a second later.
        if (retry) return this.writePending();
      }
    } catch (error) {
      if (error instanceof FencedWriteError) return this.refuse(error);
      // The store's health says so (and is logged where it changes); the batch waits for the next tick.
      this.health.failed(error, now);
      return;
    }
    await this.prune(now);
  }

  /**
   * A leader with a newer epoch has written: this one paused past its lease,
   * or Redis handed it an epoch the store had already seen. Its candles are
   * dropped (and counted), never retried, and it records nothing more; the
   * store itself is fine.
   */
  private refuse(error: FencedWriteError): void {
    this.refused = true;
    this.dropped += (this.unwritten?.length ?? 0) + this.dirty.minute.size + this.dirty.hour.size + this.dirty.day.size;
    this.unwritten = null;
    for (const grain of GRAINS) this.dirty[grain].clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.fence?.onRefused(error.fence);
  }

  /** Everything changed since the last cut, copied: a batch is never touched by later points. */
  private cut(): StoredCandle[] {
    const rows: StoredCandle[] = [];
    for (const grain of GRAINS) {
      for (const { reference, candle } of this.dirty[grain]) rows.push({ grain, reference, candle: { ...candle } });
      this.dirty[grain].clear();
    }
    return rows;
  }

  /** Minute candles past the retention go, once a minute; a failure waits for the next minute. */
  private async prune(now: number): Promise<void> {
    if (now < this.nextPrune) return;
    this.nextPrune = now + PRUNE_MS;
    try {
      await this.repository.pruneBefore('minute', now - this.minuteDays * DAY_MS);
    } catch (error) {
      this.onError(error);
    }
  }

  /**
   * Continue the candles the store already holds: for every candle this
   * process holds (and the current minute, hour and day), the stored candle of
   * the same start comes first and what was recorded here is folded in after
   * it. Then each reference's last recorded value, so an unchanged value is
   * not recorded again. Returns the market days for the engine.
   */
  private async seed(now: number): Promise<Map<string, DaySeed>> {
    const current = this.startsAt(now);
    // What this process already holds (recorded before its load, or after a load that failed), by grain, start and reference.
    const mine = new Map<string, Tracked>();
    const id = (grain: Grain, start: number, reference: string) => `${grain} ${start} ${reference}`;
    for (const open of this.open.values()) for (const tracked of Object.values(open)) mine.set(id(tracked.grain, tracked.candle.start, tracked.reference), tracked);
    for (const grain of GRAINS) for (const tracked of this.dirty[grain]) mine.set(id(grain, tracked.candle.start, tracked.reference), tracked);

    const todays = new Map<string, Candle>();
    for (const grain of GRAINS) {
      const starts = new Set([current[grain]]);
      for (const tracked of mine.values()) if (tracked.grain === grain) starts.add(tracked.candle.start);
      for (const start of starts) {
        const stored = await this.repository.startingAt(grain, start);
        if (grain === 'day' && start === current.day) for (const [reference, candle] of stored) todays.set(reference, { ...candle });
        for (const [reference, candle] of stored) {
          const held = mine.get(id(grain, start, reference));
          if (held) {
            const merged = { ...candle };
            mergeLater(merged, held.candle);
            Object.assign(held.candle, merged);
          } else if (start === current[grain]) {
            const open = this.open.get(reference) ?? {};
            if (!open[grain]) open[grain] = { reference, grain, candle };
            this.open.set(reference, open);
          }
        }
      }
    }
    // Today as recorded here, after the stored part (a recorder that recorded before its load).
    for (const [reference, open] of this.open) {
      const day = open.day?.candle;
      if (day && day.start === current.day) todays.set(reference, { ...day });
    }
    const today = current.day;
    const previous = await this.repository.latestBefore('day', today);

    const seeds = new Map<string, DaySeed>();
    for (const reference of new Set([...todays.keys(), ...previous.keys()])) {
      const day = todays.get(reference);
      const before = previous.get(reference);
      const latest = (day ?? before)!;
      seeds.set(reference, {
        day: this.time.day(latest.start),
        open: latest.open,
        high: latest.high,
        low: latest.low,
        close: latest.close,
        prevClose: day && before ? before.close : null,
      });
      if (!this.last.has(reference)) this.last.set(reference, { value: latest.close, source: latest.source, updatedAt: latest.closeAt, day: this.time.day(latest.start) });
    }
    await this.activity.load(this.repository, now);
    this.seeded = true;
    return seeds;
  }
}
