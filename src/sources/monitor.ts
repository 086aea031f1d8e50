import { systemClock, type Clock } from '../domain/clock.js';
import { CoalescedRun } from '../domain/coalesced-run.js';
import type { SourceValue } from '../domain/rate.js';
import type { Reference } from '../domain/reference.js';
import { countBands, type BandCount, type SourceView } from '../domain/resolve.js';
import type { Logger } from '../log.js';
import { describeDrops, NO_DROPS, sameDrops, type DropCount } from './drops.js';
import { FileSourceReader } from './file.js';
import type { FormatSpec } from './formats/index.js';
import { assessHealth, healthSignature, type SourceHealth, type SourceState } from './health.js';
import { countScreening, type ScreenCount, type ScreeningVerdicts } from './screening-count.js';
import { HttpSourceReader, nextDelayMs } from './http.js';
import { DEFAULT_MAX_BYTES } from './read-document.js';
import { DocumentParseThreads } from './parse-threads.js';
import { DEFAULT_CLOCK_SKEW_MS, NoUsableValuesError, type SourceData } from './parse.js';
import { describeReadError, type SourceReader } from './reader.js';
import { describeUnknownKeys, NO_UNKNOWN_KEYS, sameUnknownKeys, type UnknownKeys } from './unknown-keys.js';

export type { SourceHealth, SourceState } from './health.js';
export type { ScreeningVerdicts } from './screening-count.js';

export interface SourceConfig {
  name: string;
  /** `manual`: prices set with `nerkh prices set`, read from the store (sources/manual.ts). */
  type: 'file' | 'http' | 'manual';
  path?: string;
  url?: string;
  /** Infinity for a manual source without one: its prices stay fresh until they expire. */
  max_age_seconds: number;
  poll_seconds: number;
  timeout_seconds: number;
  /** Longest wait between polls of a failing http source; default max(poll_seconds, 30). */
  max_backoff_seconds?: number;
  /** Decoded document size at most; default 16 MiB. */
  max_bytes?: number;
  /** http: follow redirects (each hop held to the address rule); default false. */
  follow_redirects?: boolean;
  /** http: allow plain http:// to a host that is not loopback; default false. */
  allow_insecure?: boolean;
  /** How far ahead of the receive time a timestamp is clamped to it rather than refused; default 30. */
  clock_skew_seconds?: number;
  /** The shape of the source's document, compiled from `format`, `items` and `updated_at_path`; default nerkh. */
  format?: FormatSpec;
}

/** The logger calls the monitor makes: a pino logger fits. */
export type SourceLogger = Pick<Logger, 'debug' | 'info' | 'warn'>;

export interface SourceMonitorOptions {
  /** A source's reader; `parsing` is the monitor's parse threads, for a reader that parses documents. */
  readerFor?: (config: SourceConfig, parsing: DocumentParseThreads) => SourceReader;
  /** Where state changes and background read failures are written. */
  logger?: SourceLogger;
  /** The item keys worth keeping (the catalogue's source keys); default: every item is kept. */
  wantedKeys?: ReadonlySet<string>;
  /** The catalogue's references: each kept document's values are counted against their sanity bands; none: not counted. */
  references?: readonly Reference[];
}

/** How often state changes that only the clock causes (data ageing past max age) are looked for. */
const STATE_CHECK_MS = 1000;

const SILENT: SourceLogger = { debug() {}, info() {}, warn() {} };

/** Hears every source's health; `changed`: it moved other than by ages and last checks. */
export type HealthListener = (health: readonly SourceHealth[], changed: boolean) => void;

/** One source with its last good data and what its health is assessed from; only the monitor writes it. */
class MonitoredSource {
  data: SourceData | null = null;
  error: string | null = null;
  lastCheck: number | null = null;
  failures = 0;
  /** Items dropped from the latest document parsed, good or refused. */
  dropped = 0;
  /** Of those, items stamped beyond the allowed clock skew. */
  ahead = 0;
  /** Items of the latest document parsed that were kept, and why the dropped ones were dropped. */
  mapped = 0;
  dropReasons: readonly DropCount[] = NO_DROPS;
  bands: BandCount | null = null;
  /** Fresh values screening rejected in the latest build (outliers, held jumps). */
  screened: ScreenCount | null = null;
  /** Values rejected as outliers since start, each counted when it is first rejected. */
  outliersTotal = 0;
  /** The state last logged; null before the first look. */
  loggedState: SourceState | null = null;
  /** The unknown item keys last warned about, so the same set is told once, not at every read. */
  private loggedUnknown: UnknownKeys = NO_UNKNOWN_KEYS;
  /** The drops last warned about, likewise. */
  private loggedDrops: readonly DropCount[] = NO_DROPS;
  private readonly reading = new CoalescedRun(() => this.readOnce(), () => !this.stopped);
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    readonly config: SourceConfig,
    readonly reader: SourceReader,
    private readonly clock: Clock,
    private readonly logger: SourceLogger,
    /** Called when the data or the read error changed (the engine rebuilds). */
    private readonly onChange: () => void,
    /** Called after every read, good or not (its health may have moved). */
    private readonly onRead: () => void,
    private readonly references: readonly Reference[] | null,
  ) {}

  /** Read now; concurrent calls coalesce into one read plus at most one follow-up. */
  refresh(): Promise<void> {
    return this.reading.run();
  }

  private async readOnce(): Promise<void> {
    const before = this.error;
    try {
      const data = await this.reader.readIfChanged();
      this.lastCheck = this.clock.now();
      this.failures = 0;
      // An unchanged source keeps its error state until it changes (a corrupt file stays corrupt).
      if (data) {
        if (data.ahead > 0 && data.ahead !== this.ahead) this.logAhead(data.ahead);
        this.logUnknownKeys(data.unknownKeys);
        this.logDrops(data.dropReasons);
        this.data = data;
        this.dropped = data.dropped;
        this.ahead = data.ahead;
        this.mapped = data.items.size;
        this.dropReasons = data.dropReasons;
        // Values out of their band are never served; how many this source holds only moves when its data does.
        this.bands = this.references ? countBands(this.references, [this.view()]).get(this.config.name)! : null;
        this.error = null;
        this.onChange();
      } else if (before !== null && this.config.type === 'http') {
        this.error = null;
        this.onChange();
      }
    } catch (error) {
      this.lastCheck = this.clock.now();
      this.failures++;
      // A bad read, or a document without one usable value, never replaces the last good data.
      this.error = describeReadError(error);
      if (error instanceof NoUsableValuesError) {
        [this.dropped, this.ahead, this.mapped, this.dropReasons] = [error.dropped, error.ahead, 0, error.reasons];
        this.logDrops(error.reasons);
      }
      this.logFailure(error, before);
      if (this.error !== before) this.onChange();
    }
    this.checkState();
    this.onRead();
  }

  /** Values refused for a clock ahead of ours are worth a warning each time their count changes (the status page shows them too). */
  private logAhead(ahead: number): void {
    const skew = this.config.clock_skew_seconds ?? DEFAULT_CLOCK_SKEW_MS / 1000;
    this.logger.warn({ part: 'sources', source: this.config.name, ahead }, `source ${this.config.name}: ${ahead} value${ahead === 1 ? '' : 's'} stamped more than ${skew} s ahead of the clock dropped`);
  }

  /**
   * Item keys that match no reference are a warning when first seen and again
   * whenever the set changes (a file rewritten with the same keys says nothing);
   * the status pages show them for as long as they last.
   */
  private logUnknownKeys(keys: UnknownKeys): void {
    if (sameUnknownKeys(keys, this.loggedUnknown)) return;
    const before = this.loggedUnknown;
    this.loggedUnknown = keys;
    const fields = { part: 'sources', source: this.config.name, unknown_keys: keys.count, sample: keys.sample };
    if (keys.count > 0) this.logger.warn(fields, `source ${this.config.name}: ${describeUnknownKeys(keys)}`);
    else if (before.count > 0) this.logger.info(fields, `source ${this.config.name}: every item key matches a reference now`);
  }

  /**
   * Dropped items are a warning, with their reasons and the catalogue keys
   * they hit, when first seen and whenever that changes; the same drops at
   * every read say nothing more (the status pages show them meanwhile).
   */
  private logDrops(drops: readonly DropCount[]): void {
    if (sameDrops(drops, this.loggedDrops)) return;
    const before = this.loggedDrops;
    this.loggedDrops = drops;
    const fields = { part: 'sources', source: this.config.name, dropped_reasons: drops };
    if (drops.length > 0) this.logger.warn(fields, `source ${this.config.name}: items dropped: ${describeDrops(drops)}`);
    else if (before.length > 0) this.logger.info(fields, `source ${this.config.name}: no item dropped now`);
  }

  /** The first failure of a run, or a new reason, is a warning; the same failure again is detail. */
  private logFailure(error: unknown, before: string | null): void {
    const fields = { part: 'sources', source: this.config.name, reason: this.error, detail: (error as Error)?.message, failures: this.failures };
    if (this.error !== before) this.logger.warn(fields, `source ${this.config.name}: read failed: ${this.error}`);
    else this.logger.debug(fields, `source ${this.config.name}: read failed again`);
  }

  /** Log a change of state, with its reason: worse as a warning, recovery as information. */
  checkState(now = this.clock.now()): void {
    // Before its first read a source has no state worth telling.
    if (this.lastCheck === null) return;
    const health = this.health(now);
    const from = this.loggedState;
    if (health.state === from) return;
    this.loggedState = health.state;
    // The first look is news only when something is wrong.
    if (from === null && health.state === 'active') return;
    const fields = { part: 'sources', source: this.config.name, from, to: health.state, reason: health.error };
    const message = `source ${this.config.name}: ${from ?? 'starting'} → ${health.state}${health.error ? ` (${health.error})` : ''}`;
    if (health.state === 'active') this.logger.info(fields, message);
    else this.logger.warn(fields, message);
  }

  start(): void {
    // A file is watched and the store is polled by the reader itself; only http is polled here, with backoff.
    if (this.config.type !== 'http') {
      this.reader.start(() => void this.refresh());
      return;
    }
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.refresh().then(loop), nextDelayMs(this.config.poll_seconds, this.failures, this.config.max_backoff_seconds));
      this.timer.unref();
    };
    loop();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.reader.stop();
  }

  view(): SourceView {
    return {
      name: this.config.name,
      healthy: this.error === null,
      maxAgeMs: this.config.max_age_seconds * 1000,
      items: this.data?.items ?? EMPTY,
      dropped: this.data?.droppedKeys,
    };
  }

  health(now: number): SourceHealth {
    return assessHealth(
      {
        name: this.config.name,
        maxAgeSeconds: this.config.max_age_seconds,
        dataTime: this.data?.dataTime ?? null,
        readError: this.error,
        lastCheck: this.lastCheck,
        dropped: this.dropped,
        ahead: this.ahead,
        bands: this.bands,
        outliers: this.screened?.outliers ?? 0,
        held: this.screened?.held ?? 0,
        outliersTotal: this.outliersTotal,
        unknownKeys: this.data?.unknownKeys ?? NO_UNKNOWN_KEYS,
        format: this.config.format?.kind ?? 'nerkh',
        mapped: this.mapped,
        dropReasons: this.dropReasons,
      },
      now,
    );
  }
}

const EMPTY: ReadonlyMap<string, SourceValue> = new Map();

export function createReader(config: SourceConfig, clock: Clock = systemClock, wanted: ReadonlySet<string> | null = null, parsing?: DocumentParseThreads): SourceReader {
  const clockSkewMs = config.clock_skew_seconds === undefined ? undefined : config.clock_skew_seconds * 1000;
  const format = config.format;
  if (config.type === 'file') return new FileSourceReader(config.path!, config.poll_seconds, clock, { timeoutMs: config.timeout_seconds * 1000, maxBytes: config.max_bytes, clockSkewMs, wanted, format, parsing });
  const limits = { maxBytes: config.max_bytes, followRedirects: config.follow_redirects, allowInsecure: config.allow_insecure, clockSkewMs, wanted, format, parsing };
  return new HttpSourceReader(config.url!, config.timeout_seconds * 1000, limits, clock);
}

/**
 * Keeps every configured source read, one failure never stopping the others,
 * tells its listener whenever a source's data changed, and logs each
 * source's state changes and read failures.
 *
 * The one owner of each source's health: what its reads gave, how its kept
 * values stand against the sanity bands, and what screening rejected of them
 * in the latest snapshot (`hearScreening`). Everything else reads `health`,
 * or hears `onHealthChange`.
 */
export class SourceMonitor {
  private readonly sources: MonitoredSource[];
  private listener: () => void = () => {};
  private readonly healthListeners = new Set<HealthListener>();
  /** The health last told to the listeners, less what moves on its own (ages, last checks). */
  private healthSeen = '';
  /** Screening's verdicts in the latest snapshot, so each new outlier is counted once. */
  private verdicts: ScreeningVerdicts = new Map();
  private stateTimer: NodeJS.Timeout | null = null;
  /** Where the sources' documents are parsed: a thread per source at most, so no parse waits for another source's. */
  private readonly parsing: DocumentParseThreads;

  constructor(
    configs: SourceConfig[],
    private readonly clock: Clock = systemClock,
    options: SourceMonitorOptions = {},
  ) {
    const readerFor = options.readerFor ?? ((config: SourceConfig, parsing: DocumentParseThreads) => createReader(config, clock, options.wantedKeys ?? null, parsing));
    const logger = options.logger ?? SILENT;
    const references = options.references ?? null;
    const documents = configs.filter((config) => config.type !== 'manual');
    // One heap bound for all: the largest document any of them allows.
    this.parsing = new DocumentParseThreads({ threads: documents.length, maxBytes: Math.max(0, ...documents.map((config) => config.max_bytes ?? DEFAULT_MAX_BYTES)) });
    this.sources = configs.map((config) => new MonitoredSource(config, readerFor(config, this.parsing), clock, logger, () => this.listener(), () => this.noticeHealth(), references));
  }

  /** Called whenever a source's data or read error changed: what the engine resolves from. */
  onChange(listener: () => void): void {
    this.listener = listener;
  }

  /**
   * Called with every source's health after each read, each snapshot heard
   * and each second's look at the clock; `changed` says whether it moved
   * other than by ages and last checks (a state, an error, a count: worth
   * telling other nodes at once). Returns the unsubscribe. Readers age what
   * they were told themselves (`healthAt`).
   */
  onHealth(listener: HealthListener): () => void {
    this.healthListeners.add(listener);
    return () => this.healthListeners.delete(listener);
  }

  /** First read of every source (so the first snapshot has data), then watching and polling. */
  async start(): Promise<void> {
    await Promise.all(this.sources.map((source) => source.refresh()));
    for (const source of this.sources) source.start();
    this.stateTimer = setInterval(() => this.checkStates(), STATE_CHECK_MS);
    this.stateTimer.unref();
  }

  stop(): void {
    if (this.stateTimer) clearInterval(this.stateTimer);
    this.stateTimer = null;
    for (const source of this.sources) source.stop();
    void this.parsing.close();
  }

  get names(): string[] {
    return this.sources.map((source) => source.config.name);
  }

  views(): SourceView[] {
    return this.sources.map((source) => source.view());
  }

  /** Every source's health as it stands at `now`: the one accessor. */
  health(now: number): SourceHealth[] {
    return this.sources.map((source) => source.health(now));
  }

  /**
   * Screening's verdicts in a snapshot just built (by reference, then
   * source): what it rejected of each source's values is part of that
   * source's health. The monitor hears every snapshot the engine publishes;
   * the engine itself keeps no health.
   */
  hearScreening(verdicts: ScreeningVerdicts): void {
    const counts = countScreening(verdicts, this.verdicts);
    this.verdicts = verdicts;
    for (const source of this.sources) {
      const count = counts.get(source.config.name) ?? null;
      source.screened = count;
      source.outliersTotal += count?.newOutliers ?? 0;
    }
    this.noticeHealth();
  }

  private checkStates(now = this.clock.now()): void {
    for (const source of this.sources) source.checkState(now);
    this.noticeHealth(now);
  }

  /** Tell the listeners the health as it stands, and whether it moved. */
  private noticeHealth(now = this.clock.now()): void {
    if (this.healthListeners.size === 0) return;
    const health = this.health(now);
    const signature = healthSignature(health);
    const changed = signature !== this.healthSeen;
    this.healthSeen = signature;
    for (const listener of this.healthListeners) listener(health, changed);
  }
}
