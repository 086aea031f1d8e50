import type { LeaderLease } from '../bus/lease.js';
import type { Notices } from '../bus/notices.js';
import type { SnapshotBus } from '../bus/snapshot-bus.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { AppConfig } from '../config.js';
import { DemoFeeder } from '../demo/feeder.js';
import type { ZoneTime } from '../domain/time.js';
import type { HistoryRecorder } from '../history/record/recorder.js';
import type { DerivedReference } from '../domain/formula.js';
import type { Screening } from '../domain/screening.js';
import { RatesEngine } from '../live/engine.js';
import type { DaySeed } from '../live/market-day.js';
import type { Markets } from '../live/markets.js';
import type { Snapshot } from '../live/snapshot.js';
import type { Logger } from '../log.js';
import { ManualSourceReader, type ManualPriceStore } from '../sources/manual.js';
import { createReader, SourceMonitor, type ScreeningVerdicts, type SourceConfig, type SourceHealth } from '../sources/monitor.js';
import type { DocumentParseThreads } from '../sources/parse-threads.js';
import type { SourceReader } from '../sources/reader.js';
import type { WebhookTerm } from '../webhooks/leadership.js';

/** How often the leader looks whether it owes the bus a publish (sources' health changed with no rate changing, or a while passed). */
const REPUBLISH_CHECK_MS = 1000;
/**
 * The leader publishes at least this often, changed or not: every node then
 * knows the leader is alive and shows its sources as of at most this long ago
 * (serving nodes age their snapshot themselves once they hear nothing for
 * longer, see feed.ts).
 */
export const REPUBLISH_MS = 2000;

export interface IngestOptions {
  id: string;
  config: AppConfig;
  catalogue: Catalogue;
  sourcePriority: Record<string, string[]>;
  /** Screening rules by canonical reference key (config `screening`); the defaults for the rest. */
  screening?: Record<string, Screening>;
  /** The derived references (config `derived`), in the order they are resolved. */
  derived?: readonly DerivedReference[];
  time: ZoneTime;
  logger: Logger;
  lease: LeaderLease;
  bus: SnapshotBus;
  /** A history recorder for a new spell of leadership (only the leader records); none: no history. */
  openRecorder?: () => HistoryRecorder;
  /**
   * Asked as a spell of leadership begins, before its engine starts: a
   * promise while something writes the history's past first (the demo's
   * first start), null when nothing does. Meanwhile the recorder records in
   * memory; once the promise settles it loads the history, as after a
   * restart, and the engine takes the market days it read.
   */
  historyWriter?: (spell: HistorySpell) => Promise<unknown> | null;
  /** The webhooks of a new spell of leadership (only the leader evaluates alerts and sends); none: no webhooks. */
  openWebhooks?: () => WebhookTerm;
  /** Where manual sources' prices are kept (the store); needed when the config has a manual source. */
  manualPrices?: ManualPriceStore;
  /** Change notices: a price change announced by `nerkh prices` makes manual sources look at once. */
  notices?: Notices;
  /** The markets' calendars (ages count open time; rates carry their market's state); none: always open. */
  markets?: Markets;
}

/** What a writer of the history's past is told of the spell of leadership it writes for. */
export interface HistorySpell {
  /** The lease epoch its writes are fenced by (null: not fenced). */
  fenceEpoch: number | null;
  /** Whether the spell has ended (stop writing). */
  ended(): boolean;
}

/** One spell of leadership: its own monitor and engine, since a stopped monitor does not start again. */
interface Leadership {
  readonly monitor: SourceMonitor;
  readonly engine: RatesEngine;
  readonly feeder: DemoFeeder | null;
  readonly recorder: HistoryRecorder | null;
  readonly webhooks: WebhookTerm | null;
  ticker: NodeJS.Timeout | null;
  /** The sources' health as the monitor last told it, and whether it moved since the last publish. */
  health: readonly SourceHealth[];
  healthUnpublished: boolean;
  /** When it last published. */
  publishedAt: number;
  ended: boolean;
}

/**
 * The ingest role: while this node holds the leader lease, read the sources,
 * build snapshots, publish them on the bus (which gives each its version) and
 * record them in the history. Each gain of the lease starts a new monitor,
 * engine and recorder that continue from the previous leader's stale-fallback
 * memory (it travels with every snapshot) and market days (from the last
 * snapshot, else the stored candles); each loss stops them, writing what the
 * recorder still holds. With one process (the embedded default) the lease is
 * always held.
 */
export class IngestRole {
  private leadership: Leadership | null = null;
  /** Leadership changes are applied one after the other, in order. */
  private applying: Promise<void> = Promise.resolve();
  private stopped = false;
  private unlisten: (() => void) | null = null;

  constructor(private readonly options: IngestOptions) {}

  /** Follow the lease from now on; resolves once a leadership held now has published its first snapshot. */
  start(): Promise<void> {
    this.unlisten = this.options.lease.onChange(() => this.follow());
    return this.follow();
  }

  /** Whether this node is ingesting now. */
  get leading(): boolean {
    return this.leadership !== null;
  }

  /** The history recorder of the current spell of leadership; null while this node does not lead. */
  get recorder(): HistoryRecorder | null {
    return this.leadership?.recorder ?? null;
  }

  /** The sources as this node reads them while it leads; null otherwise. */
  health(now: number): SourceHealth[] | null {
    return this.leadership ? this.leadership.monitor.health(now) : null;
  }

  /** Stop ingesting for good (shutdown); the lease itself is closed by its owner. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    await this.follow();
  }

  /**
   * Bring the role in line with the lease, after any change still being
   * applied: a gain starts a spell of leadership (its first source reads take a moment), a
   * loss ends it. A publish from a spell of leadership that has lost the lease meanwhile is
   * refused by the bus (the lease token fences it).
   */
  private follow(): Promise<void> {
    this.applying = this.applying
      .then(async () => {
        const lead = !this.stopped && this.options.lease.isLeader;
        if (lead && !this.leadership) await this.begin();
        else if (!lead && this.leadership) await this.standDown();
      })
      .catch((error: unknown) => this.options.logger.error({ part: 'ingest', err: error }, 'starting or stopping ingest failed'));
    return this.applying;
  }

  private async begin(): Promise<void> {
    const { config, catalogue, sourcePriority, screening, derived, time, logger, bus } = this.options;
    const feeder = config.demo ? new DemoFeeder(config.sources, Math.random, (line) => logger.info({ part: 'demo' }, line), catalogue, time.clock) : null;
    feeder?.start();
    // Only the catalogue's keys are ever looked up: a source's other items are counted, never stored.
    const wantedKeys = new Set(catalogue.references.map((reference) => reference.source_key));
    const readerFor = (source: SourceConfig, parsing: DocumentParseThreads) => (source.type === 'manual' ? manualReader(source, this.options) : createReader(source, time.clock, wantedKeys, parsing));
    const monitor = new SourceMonitor(config.sources, time.clock, { logger, wantedKeys, references: catalogue.references, readerFor });
    const engine = new RatesEngine(catalogue, monitor, time, sourcePriority, screening, derived, this.options.markets ?? null);
    const recorder = this.options.openRecorder?.() ?? null;
    // Serve the same last known values as the leader before: its memory travels with every snapshot.
    const latest = bus.latest();
    engine.adoptKnownValues(latest?.lastKnown ?? new Map());
    const webhooks = this.options.openWebhooks?.() ?? null;
    const leadership: Leadership = { monitor, engine, feeder, recorder, webhooks, ticker: null, health: monitor.health(time.now()), healthUnpublished: false, publishedAt: 0, ended: false };
    this.leadership = leadership;
    // The monitor owns the sources' health: the bus gets what it last told, and it hears what screening rejected in each snapshot before the bus does.
    monitor.onHealth((health, changed) => {
      leadership.health = health;
      if (changed) leadership.healthUnpublished = true;
    });
    engine.onSnapshot((snapshot) => monitor.hearScreening(snapshot.sources?.screened ?? NO_VERDICTS));
    try {
      const pastWritten = recorder ? (this.options.historyWriter?.({ fenceEpoch: recorder.fenceEpoch, ended: () => leadership.ended }) ?? null) : null;
      // The day's open, high and low go on where the last leader left them (the store lags it by up to a second).
      const stored = recorder && !pastWritten ? await recorder.load() : new Map<string, DaySeed>();
      engine.seedDays(latest ? withSharedDays(stored, latest.snapshot, time) : stored);
      engine.onSnapshot((snapshot) => this.publish(leadership, snapshot));
      await engine.start();
      recorder?.start(engine);
      if (recorder && pastWritten) void this.loadAfter(pastWritten, leadership, recorder);
    } catch (error) {
      this.leadership = null;
      await this.end(leadership);
      throw error;
    }
    leadership.ticker = setInterval(() => this.republishIfDue(leadership), REPUBLISH_CHECK_MS);
    leadership.ticker.unref();
    logger.info({ part: 'ingest', id: this.options.id }, 'ingesting: reading the sources and publishing snapshots');
  }

  /** Once the past is written: the recorder continues the stored candles and the engine learns the market days, as after a restart. */
  private async loadAfter(pastWritten: Promise<unknown>, leadership: Leadership, recorder: HistoryRecorder): Promise<void> {
    await pastWritten.catch(() => {});
    const seeds = await recorder.load();
    if (!leadership.ended) leadership.engine.seedDays(seeds);
  }

  private async standDown(): Promise<void> {
    const leadership = this.leadership!;
    this.leadership = null;
    await this.end(leadership);
    this.options.logger.info({ part: 'ingest', id: this.options.id }, 'ingest stopped');
  }

  private async end(leadership: Leadership): Promise<void> {
    leadership.ended = true;
    if (leadership.ticker) clearInterval(leadership.ticker);
    leadership.ticker = null;
    leadership.engine.stop();
    leadership.feeder?.stop();
    // After the engine: every value served is recorded, every crossing seen is queued.
    await leadership.recorder?.stop();
    await leadership.webhooks?.stop();
  }

  /** The snapshot with the sources' health as the monitor last told it (every reader ages it to its own moment). */
  private publish(leadership: Leadership, snapshot: Snapshot): void {
    if (leadership.ended) return;
    const { time, bus, id } = this.options;
    leadership.publishedAt = time.now();
    leadership.healthUnpublished = false;
    // A copy: the engine keeps updating its own map, while the bus may hold this one.
    const lastKnown = new Map(leadership.engine.knownValues());
    void bus.publish({ snapshot, health: leadership.health, lastKnown, leader: id });
    leadership.webhooks?.snapshot(snapshot);
  }

  /** Publish again when the sources' health changed with no rate changing, or when nothing was published for a while. */
  private republishIfDue(leadership: Leadership): void {
    if (leadership.healthUnpublished || this.options.time.now() - leadership.publishedAt >= REPUBLISH_MS) this.publish(leadership, leadership.engine.current());
  }
}

/** A manual source's reader: the store's prices, looked at on every poll and at once on a `prices` notice. */
function manualReader(source: SourceConfig, options: IngestOptions): SourceReader {
  const { manualPrices, notices, catalogue, time } = options;
  if (!manualPrices) throw new Error(`source ${source.name}: a manual source needs the store`);
  const onNotice = notices
    ? (hint: () => void) =>
        notices.onNotice((kind) => {
          if (kind === 'prices') hint();
        })
    : undefined;
  return new ManualSourceReader(source.name, manualPrices, (key) => catalogue.get(key)?.source_key, time.clock, { pollMs: source.poll_seconds * 1000, onNotice });
}

const NO_VERDICTS: ScreeningVerdicts = new Map();

/**
 * The market days as the last snapshot shows them, over those of the store:
 * a reference whose shared snapshot is of the same day or later than its
 * stored daily candle continues from the snapshot's open, high and low.
 */
export function withSharedDays(stored: ReadonlyMap<string, DaySeed>, snapshot: Snapshot, time: ZoneTime): Map<string, DaySeed> {
  const seeds = new Map(stored);
  const day = time.day(snapshot.builtAt);
  for (const [key, { rate }] of snapshot.rates) {
    if (rate.value === null || rate.day_open === null || rate.day_high === null || rate.day_low === null) continue;
    const before = seeds.get(key);
    if (before && before.day > day) continue;
    seeds.set(key, { day, open: rate.day_open, high: rate.day_high, low: rate.day_low, close: rate.value, prevClose: rate.prev_close });
  }
  return seeds;
}
