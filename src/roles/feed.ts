import type { SharedSnapshot, SnapshotBus } from '../bus/snapshot-bus.js';
import type { DerivedReference } from '../domain/formula.js';
import type { ZoneTime } from '../domain/time.js';
import { ageSnapshot, sameRates } from '../live/ageing.js';
import { assessDerived, derivedHealth, type DerivedAssessment } from '../live/derived-health.js';
import type { Markets } from '../live/markets.js';
import { RefreshTiers } from '../live/refresh-tiers.js';
import type { Snapshot } from '../live/snapshot.js';
import { healthAt, type SourceHealth, type SourceType } from '../sources/health.js';
import type { SourceConfig } from '../sources/monitor.js';
import { REPUBLISH_MS } from './ingest.js';

/** How often a node looks whether it must age its snapshot itself. */
const AGE_CHECK_MS = 1000;
/** Nothing heard from the leader for this long (it publishes at least every REPUBLISH_MS): no leader is feeding this node. */
const QUIET_MS = REPUBLISH_MS * 2 + 1000;

export interface FeedOptions {
  bus: SnapshotBus;
  time: ZoneTime;
  sources: readonly SourceConfig[];
  /** The longest refresh interval of any plan: how far back the tiers look. */
  longestIntervalSeconds: number;
  /** The sources as this node reads them while it is the ingest leader; null when it is not. */
  localHealth: (now: number) => SourceHealth[] | null;
  /** The derived references (config `derived`): listed as one more source, `derived`, when there are any. */
  derived?: readonly DerivedReference[];
  /** The markets' calendars: ages count open time while this node ages its snapshot itself. */
  markets?: Markets;
}

/**
 * What a node serves: every snapshot the bus delivers goes into the refresh
 * tiers (a republished snapshot whose rates did not change leaves them
 * alone), with the leader's view of its sources.
 *
 * Honest ages: while the bus is down, or the leader has gone quiet (dead and
 * not yet replaced), no new snapshot comes, and the last one would go on
 * saying its values are as fresh as when it was built. So the node then ages
 * it itself once a second (live/ageing.ts): values past their source's max
 * age turn stale and `stale_seconds` keeps counting. Source ages on the
 * status page are always recomputed at the moment they are shown.
 */
export class SnapshotFeed {
  readonly snapshots: RefreshTiers;
  private shared: SharedSnapshot | null = null;
  private lastHeard = -Infinity;
  private ticker: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly maxAgeMs: Map<string, number>;
  private readonly types: Map<string, SourceType>;
  /** The derived source's state in the snapshot it was last worked out for. */
  private derivedIn: { snapshot: Snapshot; assessment: DerivedAssessment } | null = null;

  constructor(private readonly options: FeedOptions) {
    this.snapshots = new RefreshTiers(null, options.longestIntervalSeconds);
    this.maxAgeMs = new Map(options.sources.map((source) => [source.name, source.max_age_seconds * 1000]));
    this.types = new Map(options.sources.map((source) => [source.name, source.type]));
  }

  /** Take the latest snapshot the bus holds (if any) and every newer one. */
  start(): void {
    this.unsubscribe = this.options.bus.subscribe((shared) => this.receive(shared));
    const latest = this.options.bus.latest();
    if (latest) this.receive(latest);
    this.ticker = setInterval(() => this.ageIfQuiet(), AGE_CHECK_MS);
    this.ticker.unref();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  /**
   * The sources as the leader last shared them, with ages as of `now` (this
   * node's own monitor while it leads), each with its type from the config;
   * then the derived source, worked out from the snapshot this node serves.
   */
  sourceHealth(now: number): SourceHealth[] {
    const local = this.options.localHealth(now);
    const configured = local ?? this.shared?.health.map((health) => healthAt(health, now, (this.maxAgeMs.get(health.name) ?? Infinity) / 1000)) ?? [];
    const typed = configured.map((health) => (health.type ? health : { ...health, type: this.types.get(health.name) }));
    const derived = this.derivedHealth(now);
    return derived ? [...typed, derived] : typed;
  }

  /** The derived source at `now`; null without formulas or before the first snapshot. */
  private derivedHealth(now: number): SourceHealth | null {
    const formulas = this.options.derived ?? [];
    if (formulas.length === 0 || !this.snapshots.held) return null;
    const snapshot = this.snapshots.latest();
    if (this.derivedIn?.snapshot !== snapshot) this.derivedIn = { snapshot, assessment: assessDerived(formulas, snapshot.rates) };
    return derivedHealth(this.derivedIn.assessment, now);
  }

  private receive(shared: SharedSnapshot): void {
    this.shared = shared;
    this.lastHeard = this.options.time.now();
    const history = this.snapshots;
    if (!history.held) {
      history.push(shared.snapshot);
      return;
    }
    const served = history.latest();
    // The same rates from the same build: nothing new. A snapshot aged here has no sources (expand=sources
    // would stay empty), and a leader's build may differ in its sources alone: either one is pushed.
    if (sameRates(served, shared.snapshot) && served.sources === shared.snapshot.sources) return;
    // Tiers need build times in order; a snapshot aged here may be newer than the leader's next.
    history.push(shared.snapshot.builtAt >= served.builtAt ? shared.snapshot : { ...shared.snapshot, builtAt: served.builtAt });
  }

  private ageIfQuiet(): void {
    const now = this.options.time.now();
    const history = this.snapshots;
    if (!history.held || (this.options.bus.healthy && now - this.lastHeard < QUIET_MS)) return;
    const served = history.latest();
    const aged = ageSnapshot(served, now, this.maxAgeMs, this.options.time, this.options.markets ?? null);
    if (aged !== served) history.push(aged);
  }
}
