import type { Catalogue } from '../catalogue/catalogue.js';
import { DERIVED_SOURCE, type DerivedReference } from '../domain/formula.js';
import { resolveReference, staleFrom, type JumpHold, type KnownValue, type OpenAge, type ScreenedOut, type SourceView } from '../domain/resolve.js';
import type { Rate } from '../domain/rate.js';
import { DEFAULT_SCREENING, type Screening } from '../domain/screening.js';
import type { ZoneTime } from '../domain/time.js';
import type { SourceMonitor } from '../sources/monitor.js';
import { Derivations } from './derived.js';
import { assessDerived } from './derived-health.js';
import { MarketDays, type DaySeed } from './market-day.js';
import type { Markets } from './markets.js';
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
  private readonly orderFor: (sources: SourceView[]) => SourceView[][];
  private readonly listeners: ((snapshot: Snapshot) => void)[] = [];
  private ticker: NodeJS.Timeout | null = null;
  private unlistenMarkets: (() => void) | null = null;
  private scheduled = false;
  /** Set by source changes; cleared by a rebuild. */
  private sourcesChanged = true;
  /** The earliest moment a fresh value outlives its source's max age (epoch ms). */
  private nextExpiry = Infinity;
  /** The next local midnight (epoch ms): the market day rolls over there. */
  private nextMidnight = Infinity;
  private readonly days = new MarketDays();
  /** The references computed from others (config `derived`); null when there are none. */
  private readonly derivations: Derivations | null;
  /** Catalogue indexes in the order they are resolved: a derived reference after every reference it reads. */
  private readonly resolveOrder: readonly number[];

  constructor(
    private readonly catalogue: Catalogue,
    private readonly monitor: SourceMonitor,
    private readonly time: ZoneTime,
    sourcePriority: Record<string, string[]> = {},
    /** Screening rules by canonical reference key; DEFAULT_SCREENING for the rest. */
    screening: Record<string, Screening> = {},
    /** The derived references, each after the derived ones it reads (config-derived.ts). */
    private readonly derived: readonly DerivedReference[] = [],
    /** The markets and their calendars: a reference's age counts its market's open time, and each rate says its market's state. */
    private readonly markets: Markets | null = null,
  ) {
    this.derivations = derived.length > 0 ? new Derivations(catalogue, derived) : null;
    this.resolveOrder = this.derivations?.order ?? catalogue.references.map((_, index) => index);
    this.orderFor = priorityOrder(catalogue, monitor.names, sourcePriority, this.derivations?.keys ?? new Set());
    this.screenings = catalogue.references.map((reference) => screening[reference.key] ?? DEFAULT_SCREENING);
    this.snapshot = { version: 0, builtAt: time.now(), rates: new Map(), lastUpdate: null, counts: { ok: 0, stale: 0, unavailable: 0 } };
  }

  /** Each reference's calendar, for `?expand=sources` to judge ages as the resolver did. */
  private readonly ageOf = (key: string): OpenAge | undefined => this.markets?.calendarOf(key);

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

  /**
   * Carry each reference's market day over from the history store: before
   * `start` after a restart, or later once the recorder has loaded a history
   * written meanwhile (the demo's first start). Shows from the next rebuild.
   */
  seedDays(seeds: ReadonlyMap<string, DaySeed>): void {
    for (const [key, seed] of seeds) this.days.seed(key, seed);
    if (this.ticker && seeds.size > 0) this.schedule();
  }

  onSnapshot(listener: (snapshot: Snapshot) => void): void {
    this.listeners.push(listener);
  }

  async start(): Promise<void> {
    // An operator's closure or opening changes ages and states at once.
    this.unlistenMarkets = this.markets?.onChange(() => this.schedule()) ?? null;
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
    this.unlistenMarkets?.();
    this.unlistenMarkets = null;
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
    let nextExpiry = Infinity;
    // The derived references' own source, filled in as the build goes (each value from the rates served before it).
    const derived = this.derivations?.begin() ?? null;
    const ordered = this.orderFor(derived ? [...views, derived.view] : views);
    const rates = new Map<string, PreparedRate>();
    const counts = { ok: 0, stale: 0, unavailable: 0 };
    // Source data alone may change (a source lower in priority moved): `expand=sources` shows it, so it is a new snapshot.
    let changed = sourcesChanged || previous.rates.size !== this.catalogue.size;
    let lastUpdate: number | null = null;
    const day = this.time.day(now);
    this.nextMidnight = this.time.nextMidnight(now);
    // Every market's state, worked out once for the whole build (and kept until one of them changes).
    const markets = this.markets?.fields(now) ?? null;
    if (markets) nextExpiry = markets.until;
    const orderedByKey = new Map<string, readonly SourceView[]>();
    const screened = new Map<string, ReadonlyMap<string, ScreenedOut>>();

    for (const index of this.resolveOrder) {
      const reference = this.catalogue.references[index]!;
      derived?.prepare(reference);
      const sources = ordered[index]!;
      const screening = this.screenings[index]!;
      const calendar: OpenAge | undefined = this.markets?.calendarOf(reference.key);
      const resolution = resolveReference(reference, sources, now, this.lastKnown.get(reference.key), screening, this.holds.get(reference.key), calendar);
      const resolved = resolution.rate;
      orderedByKey.set(reference.key, sources);
      if (resolution.hold) {
        this.holds.set(reference.key, resolution.hold);
        nextExpiry = Math.min(nextExpiry, resolution.hold.since + screening.confirmMs);
      } else this.holds.delete(reference.key);
      if (resolution.screened) screened.set(reference.key, resolution.screened);
      counts[resolved.status]++;
      const rate: Rate = { ...resolved, ...this.days.fieldsFor(reference.key, resolved.value, day) };
      const marketName = markets ? this.markets!.marketOf(reference.key) : null;
      if (marketName !== null) rate.market = markets!.byName.get(marketName);
      let freshUntil = -Infinity;
      if (rate.value !== null && rate.source !== null && rate.updated_at !== null) {
        this.lastKnown.set(reference.key, { value: { raw: rate.value, value: Number(rate.value), updatedAt: rate.updated_at }, source: rate.source });
        if (lastUpdate === null || rate.updated_at > lastUpdate) lastUpdate = rate.updated_at;
        if (rate.status === 'ok') nextExpiry = Math.min(nextExpiry, (freshUntil = servedStaleFrom(sources, rate.source, reference.source_key, calendar)));
      }
      derived?.record(reference.key, resolved, freshUntil);
      const old = previous.rates.get(reference.key);
      const prepared = prepareRate(rate, this.time, old);
      if (prepared !== old) changed = true;
      rates.set(reference.key, prepared);
    }

    this.nextExpiry = nextExpiry;
    if (!changed) return previous;
    // Each source's state as its owner, the monitor, tells it now; what screening rejected goes out in the snapshot.
    const states = new Map(this.monitor.health(now).map((health) => [health.name, health.state]));
    // Rates are listed in catalogue order, whatever order they were resolved in.
    const listed = derived ? new Map(this.catalogue.references.map((reference) => [reference.key, rates.get(reference.key)!])) : rates;
    // The derived source's state as every node's status works it out from this snapshot (live/derived-health.ts).
    if (derived) states.set(DERIVED_SOURCE, assessDerived(this.derived, listed).state);
    this.snapshot = { version: previous.version + 1, builtAt: now, rates: listed, lastUpdate, counts, sources: { ordered: orderedByKey, states, screened, age: this.ageOf } };
    for (const listener of this.listeners) listener(this.snapshot);
    return this.snapshot;
  }
}

/**
 * Each reference's sources in priority order: the configured order, or for a
 * reference named in `source_priority`, its listed sources first and the rest
 * after them in configured order (so a listing never drops a source). The
 * `derived` source comes after the configured ones, and only for references
 * with a formula.
 * Returns a function from the monitor's views (configured order, then the
 * derived source when there is one) to one ordered list per catalogue entry;
 * references sharing an order share a list.
 */
function priorityOrder(catalogue: Catalogue, names: string[], sourcePriority: Record<string, string[]>, derivedKeys: ReadonlySet<string>) {
  const all = derivedKeys.size > 0 ? [...names, DERIVED_SOURCE] : names;
  const indexOrders = catalogue.references.map((reference) => {
    const usable = derivedKeys.has(reference.key) ? all : names;
    const listed = sourcePriority[reference.key];
    if (!listed) return usable === all ? null : PLAIN;
    const first = listed.map((name) => usable.indexOf(name)).filter((i) => i >= 0);
    const rest = usable.map((_, i) => i).filter((i) => !first.includes(i));
    return [...first, ...rest];
  });
  return (views: SourceView[]): SourceView[][] => {
    const shared = new Map<string, SourceView[]>();
    let plain: SourceView[] | null = null;
    return indexOrders.map((order) => {
      if (order === null) return views;
      // Every configured source, without the derived one.
      if (order === PLAIN) return (plain ??= views.slice(0, names.length));
      const id = order.join(',');
      let list = shared.get(id);
      if (!list) shared.set(id, (list = order.map((i) => views[i]!)));
      return list;
    });
  };
}

/** The configured sources in configured order, without the derived source (for a reference with no formula). */
const PLAIN = 'plain';

/** When the value served from source `name` stops being fresh: past its source's max age, or at its own expiry (a manual price's). */
function servedStaleFrom(sources: readonly SourceView[], name: string, sourceKey: string, age?: OpenAge): number {
  const view = sources.find((source) => source.name === name);
  const value = view?.items.get(sourceKey);
  return view && value ? staleFrom(value, view.maxAgeMs, age) : Infinity;
}
