import type { Catalogue } from '../catalogue/catalogue.js';
import { countBands, resolveReference, type JumpHold, type KnownValue, type ScreenedOut, type SourceView } from '../domain/resolve.js';
import type { Rate } from '../domain/rate.js';
import { DEFAULT_SCREENING, type Screening } from '../domain/screening.js';
import type { ZoneTime } from '../domain/time.js';
import type { ScreenCount, SourceMonitor } from '../sources/monitor.js';
import { MarketDays, type DaySeed } from './market-day.js';
import { prepareRate } from './prepare.js';
import type { PreparedRate, Snapshot } from './snapshot.js';

const TICK_MS = 1000;

/**
 * Turns source data into snapshots: on every source change (coalesced) and
 * once a second, because freshness and staleness move with the clock even
 * when no source changes. A rebuild on the clock that changes no rate keeps
 * the old snapshot; ETags depend only on the rates, so they stay stable either way.
 */
export class RatesEngine {
  private snapshot: Snapshot;
  private readonly lastKnown = new Map<string, KnownValue>();
  /** Jumps waiting for a second source or for time, by reference key. */
  private readonly holds = new Map<string, JumpHold>();
  /** Screening rules per catalogue entry (catalogue order). */
  private readonly screenings: Screening[];
  /** The previous build's screened-out values, so each new rejection is counted once. */
  private screened = new Map<string, ReadonlyMap<string, ScreenedOut>>();
  private readonly orderFor: (sources: SourceView[]) => SourceView[][];
  private readonly listeners: ((snapshot: Snapshot) => void)[] = [];
  private ticker: NodeJS.Timeout | null = null;
  private scheduled = false;
  /** Set by source changes; cleared by a rebuild. */
  private sourcesChanged = true;
  /** The earliest moment a fresh value outlives its source's max age (epoch ms). */
  private nextExpiry = Infinity;
  /** The next local midnight (epoch ms): the market day rolls over there. */
  private nextMidnight = Infinity;
  private readonly days = new MarketDays();

  constructor(
    private readonly catalogue: Catalogue,
    private readonly monitor: SourceMonitor,
    private readonly time: ZoneTime,
    sourcePriority: Record<string, string[]> = {},
    /** Screening rules by canonical reference key; DEFAULT_SCREENING for the rest. */
    screening: Record<string, Screening> = {},
  ) {
    this.orderFor = priorityOrder(catalogue, monitor.names, sourcePriority);
    this.screenings = catalogue.references.map((reference) => screening[reference.key] ?? DEFAULT_SCREENING);
    this.snapshot = { version: 0, builtAt: time.now(), rates: new Map(), lastUpdate: null, counts: { ok: 0, stale: 0, unavailable: 0 } };
  }

  current(): Snapshot {
    return this.snapshot;
  }

  /** The last value served per reference (the stale fallback), for the bus to hand to a successor. */
  knownValues(): ReadonlyMap<string, KnownValue> {
    return this.lastKnown;
  }

  /**
   * Continue from another engine's stale-fallback memory (a new ingest leader
   * takes the old one's), keeping any value of its own that is newer.
   */
  adoptKnownValues(known: ReadonlyMap<string, KnownValue>): void {
    for (const [key, value] of known) {
      const own = this.lastKnown.get(key);
      if (!own || own.value.updatedAt < value.value.updatedAt) this.lastKnown.set(key, value);
    }
  }

  /** Carry each reference's market day over a restart (from the history store), before `start`. */
  seedDays(seeds: ReadonlyMap<string, DaySeed>): void {
    for (const [key, seed] of seeds) this.days.seed(key, seed);
  }

  /** The market days' earlier part, learned after values were served (see `MarketDays.prepend`); shows from the next rebuild. */
  prependDays(seeds: ReadonlyMap<string, DaySeed>): void {
    for (const [key, seed] of seeds) this.days.prepend(key, seed);
    if (this.ticker) this.schedule();
  }

  onSnapshot(listener: (snapshot: Snapshot) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    this.monitor.onChange(() => {
      this.sourcesChanged = true;
      this.schedule();
    });
    await this.monitor.start();
    this.rebuild();
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
  }

  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.monitor.stop();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.rebuild();
    });
  }

  /**
   * The clock alone changes the snapshot only when a fresh value reaches its max age,
   * a stale value's age moves or the market day rolls over; otherwise a tick skips the work (a rebuild stalls
   * the event loop for a few milliseconds, which shows in request latency).
   */
  private tick(now = this.time.now()): void {
    if (this.sourcesChanged || this.snapshot.counts.stale > 0 || now >= this.nextExpiry || now >= this.nextMidnight) this.rebuild(now);
  }

  /** Resolve every reference now; publish a new snapshot only if some rate or some source's data changed. */
  rebuild(now = this.time.now()): Snapshot {
    const sourcesChanged = this.sourcesChanged;
    this.sourcesChanged = false;
    const previous = this.snapshot;
    const views = this.monitor.views();
    // Values out of their band are never served; how many each source holds only moves when a source does.
    if (sourcesChanged) this.monitor.recordBands(countBands(this.catalogue.references, views));
    const maxAge = new Map(views.map((view) => [view.name, view.maxAgeMs]));
    let nextExpiry = Infinity;
    const ordered = this.orderFor(views);
    const rates = new Map<string, PreparedRate>();
    const counts = { ok: 0, stale: 0, unavailable: 0 };
    // Source data alone may change (a source lower in priority moved): `expand=sources` shows it, so it is a new snapshot.
    let changed = sourcesChanged || previous.rates.size !== this.catalogue.size;
    let lastUpdate: number | null = null;
    const day = this.time.day(now);
    this.nextMidnight = this.time.nextMidnight(now);
    const orderedByKey = new Map<string, readonly SourceView[]>();
    const screened = new Map<string, ReadonlyMap<string, ScreenedOut>>();
    const screenCounts = new Map<string, ScreenCount>(views.map((view) => [view.name, { outliers: 0, held: 0, newOutliers: 0 }]));

    this.catalogue.references.forEach((reference, index) => {
      const sources = ordered[index]!;
      const screening = this.screenings[index]!;
      const resolution = resolveReference(reference, sources, now, this.lastKnown.get(reference.key), screening, this.holds.get(reference.key));
      const resolved = resolution.rate;
      orderedByKey.set(reference.key, sources);
      if (resolution.hold) {
        this.holds.set(reference.key, resolution.hold);
        nextExpiry = Math.min(nextExpiry, resolution.hold.since + screening.confirmMs);
      } else this.holds.delete(reference.key);
      if (resolution.screened) {
        screened.set(reference.key, resolution.screened);
        const before = this.screened.get(reference.key);
        for (const [name, why] of resolution.screened) {
          const count = screenCounts.get(name)!;
          if (why === 'outlier') {
            count.outliers++;
            if (before?.get(name) !== 'outlier') count.newOutliers++;
          } else count.held++;
        }
      }
      counts[resolved.status]++;
      const rate: Rate = { ...resolved, ...this.days.fieldsFor(reference.key, resolved.value, day) };
      if (rate.value !== null && rate.source !== null && rate.updated_at !== null) {
        this.lastKnown.set(reference.key, { value: { raw: rate.value, value: Number(rate.value), updatedAt: rate.updated_at }, source: rate.source });
        if (lastUpdate === null || rate.updated_at > lastUpdate) lastUpdate = rate.updated_at;
        if (rate.status === 'ok') nextExpiry = Math.min(nextExpiry, rate.updated_at + maxAge.get(rate.source)! + 1);
      }
      const old = previous.rates.get(reference.key);
      const prepared = prepareRate(rate, this.time, old);
      if (prepared !== old) changed = true;
      rates.set(reference.key, prepared);
    });
    this.screened = screened;
    this.monitor.recordScreening(screenCounts);

    this.nextExpiry = nextExpiry;
    if (!changed) return previous;
    const states = new Map(this.monitor.health(now).map((health) => [health.name, health.state]));
    this.snapshot = { version: previous.version + 1, builtAt: now, rates, lastUpdate, counts, sources: { ordered: orderedByKey, states, screened } };
    for (const listener of this.listeners) listener(this.snapshot);
    return this.snapshot;
  }
}

/**
 * Each reference's sources in priority order: the configured order, or for a
 * reference named in `source_priority`, its listed sources first and the rest
 * after them in configured order (so a listing never drops a source).
 * Returns a function from the monitor's views (configured order) to one
 * ordered list per catalogue entry; references sharing an order share a list.
 */
function priorityOrder(catalogue: Catalogue, names: string[], sourcePriority: Record<string, string[]>) {
  const indexOrders = catalogue.references.map((reference) => {
    const listed = sourcePriority[reference.key];
    if (!listed) return null;
    const first = listed.map((name) => names.indexOf(name)).filter((i) => i >= 0);
    const rest = names.map((_, i) => i).filter((i) => !first.includes(i));
    return [...first, ...rest];
  });
  return (views: SourceView[]): SourceView[][] => {
    const shared = new Map<string, SourceView[]>();
    return indexOrders.map((order) => {
      if (order === null) return views;
      const id = order.join(',');
      let list = shared.get(id);
      if (!list) shared.set(id, (list = order.map((i) => views[i]!)));
      return list;
    });
  };
}
