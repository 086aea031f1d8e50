import type { LeaderLease } from '../bus/lease.js';
import type { SnapshotBus } from '../bus/snapshot-bus.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { AppConfig } from '../config.js';
import type { PastContinuation } from '../demo/backfill.js';
import { DemoFeeder } from '../demo/feeder.js';
import type { ZoneTime } from '../domain/time.js';
import type { HistoryRecorder } from '../history/recorder.js';
import type { Screening } from '../domain/screening.js';
import { RatesEngine } from '../live/engine.js';
import type { DaySeed } from '../live/market-day.js';
import type { Snapshot } from '../live/snapshot.js';
import type { Logger } from '../log.js';
import { SourceMonitor, type SourceHealth } from '../sources/monitor.js';

/** How often the leader looks whether its sources' health changed with no rate changing. */
const HEALTH_CHECK_MS = 1000;
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
  time: ZoneTime;
  logger: Logger;
  lease: LeaderLease;
  bus: SnapshotBus;
  /** A history recorder for a new spell of leadership (only the leader records); none: no history. */
  openRecorder?: () => HistoryRecorder;
  /** Told when a spell of leadership begins recording: from when, with what continues a past written later, and whether the spell has ended. */
  onRecording?: (continuation: PastContinuation, from: number, ended: () => boolean) => void;
}

/** One spell of leadership: its own monitor and engine, since a stopped monitor does not start again. */
interface Term {
  readonly monitor: SourceMonitor;
  readonly engine: RatesEngine;
  readonly feeder: DemoFeeder | null;
  readonly recorder: HistoryRecorder | null;
  ticker: NodeJS.Timeout | null;
  /** When it last published, and the health it published then (the parts that do not move with the clock alone). */
  publishedAt: number;
  healthSeen: string;
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
  private term: Term | null = null;
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
    return this.term !== null;
  }

  /** The history recorder of the current spell of leadership; null while this node does not lead. */
  get recorder(): HistoryRecorder | null {
    return this.term?.recorder ?? null;
  }

  /** The sources as this node reads them while it leads; null otherwise. */
  health(now: number): SourceHealth[] | null {
    return this.term ? this.term.monitor.health(now) : null;
  }

  /** Stop ingesting for good (shutdown); the lease itself is closed by its owner. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    await this.follow();
  }

  /**
   * Bring the role in line with the lease, after any change still being
   * applied: a gain starts a term (its first source reads take a moment), a
   * loss ends it. A publish from a term that has lost the lease meanwhile is
   * refused by the bus (the lease token fences it).
   */
  private follow(): Promise<void> {
    this.applying = this.applying
      .then(async () => {
        const lead = !this.stopped && this.options.lease.isLeader;
        if (lead && !this.term) await this.begin();
        else if (!lead && this.term) await this.standDown();
      })
      .catch((error: unknown) => this.options.logger.error({ part: 'ingest', err: error }, 'starting or stopping ingest failed'));
    return this.applying;
  }

  private async begin(): Promise<void> {
    const { config, catalogue, sourcePriority, screening, time, logger, bus } = this.options;
    const feeder = config.demo ? new DemoFeeder(config.sources, Math.random, (line) => logger.info({ part: 'demo' }, line), catalogue) : null;
    feeder?.start();
    const monitor = new SourceMonitor(config.sources, time.clock, { logger });
    const engine = new RatesEngine(catalogue, monitor, time, sourcePriority, screening);
    const recorder = this.options.openRecorder?.() ?? null;
    // Serve the same last known values as the leader before: its memory travels with every snapshot.
    const latest = bus.latest();
    engine.adoptKnownValues(latest?.lastKnown ?? new Map());
    const term: Term = { monitor, engine, feeder, recorder, ticker: null, publishedAt: 0, healthSeen: '', ended: false };
    this.term = term;
    try {
      // The day's open, high and low go on where the last leader left them (the store lags it by up to a second).
      const stored = recorder ? await recorder.load() : new Map<string, DaySeed>();
      engine.seedDays(latest ? withSharedDays(stored, latest.snapshot, time) : stored);
      engine.onSnapshot((snapshot) => this.publish(term, snapshot));
      await engine.start();
      const from = time.now();
      recorder?.start(engine);
      if (recorder) this.options.onRecording?.({ recorder, engine }, from, () => term.ended);
    } catch (error) {
      this.term = null;
      await this.end(term);
      throw error;
    }
    term.ticker = setInterval(() => this.republishIfDue(term), HEALTH_CHECK_MS);
    term.ticker.unref();
    logger.info({ part: 'ingest', id: this.options.id }, 'ingesting: reading the sources and publishing snapshots');
  }

  private async standDown(): Promise<void> {
    const term = this.term!;
    this.term = null;
    await this.end(term);
    this.options.logger.info({ part: 'ingest', id: this.options.id }, 'ingest stopped');
  }

  private async end(term: Term): Promise<void> {
    term.ended = true;
    if (term.ticker) clearInterval(term.ticker);
    term.ticker = null;
    term.engine.stop();
    term.feeder?.stop();
    // After the engine: every value served is recorded.
    await term.recorder?.stop();
  }

  private publish(term: Term, snapshot: Snapshot): void {
    if (term.ended) return;
    const { time, bus, id } = this.options;
    const now = time.now();
    const health = term.monitor.health(now);
    term.publishedAt = now;
    term.healthSeen = healthSignature(health);
    // A copy: the engine keeps updating its own map, while the bus may hold this one.
    const lastKnown = new Map(term.engine.knownValues());
    void bus.publish({ snapshot, health, lastKnown, leader: id });
  }

  /** Publish again when the sources' health changed with no rate changing, or when nothing was published for a while. */
  private republishIfDue(term: Term): void {
    const now = this.options.time.now();
    if (now - term.publishedAt >= REPUBLISH_MS || healthSignature(term.monitor.health(now)) !== term.healthSeen) this.publish(term, term.engine.current());
  }
}

/** What of a source's health changes other than by the clock alone (ages are recomputed by every reader). */
function healthSignature(health: readonly SourceHealth[]): string {
  return JSON.stringify(health.map((s) => [s.name, s.state, s.error, s.last_update, s.dropped, s.out_of_range, s.outliers, s.held, s.outliers_total]));
}

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
