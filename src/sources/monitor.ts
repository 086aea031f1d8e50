import { systemClock, type Clock } from '../domain/clock.js';
import type { SourceValue } from '../domain/rate.js';
import type { BandCount, SourceView } from '../domain/resolve.js';
import type { Logger } from '../log.js';
import { FileSourceReader } from './file.js';
import { assessHealth, type ScreenCount, type SourceHealth, type SourceState } from './health.js';
import { HttpSourceReader, nextDelayMs } from './http.js';
import { NoUsableValuesError, type SourceData } from './parse.js';
import { describeReadError, type SourceReader } from './reader.js';

export type { ScreenCount, SourceHealth, SourceState } from './health.js';

export interface SourceConfig {
  name: string;
  type: 'file' | 'http';
  path?: string;
  url?: string;
  max_age_seconds: number;
  poll_seconds: number;
  timeout_seconds: number;
  /** Longest wait between polls of a failing http source; default max(poll_seconds, 30). */
  max_backoff_seconds?: number;
}

/** The logger calls the monitor makes: a pino logger fits. */
export type SourceLogger = Pick<Logger, 'debug' | 'info' | 'warn'>;

export interface SourceMonitorOptions {
  readerFor?: (config: SourceConfig) => SourceReader;
  /** Where state changes and background read failures are written. */
  logger?: SourceLogger;
}

/** How often state changes that only the clock causes (data ageing past max age) are looked for. */
const STATE_CHECK_MS = 1000;

const SILENT: SourceLogger = { debug() {}, info() {}, warn() {} };

/** One source with its last good data and its health; only the monitor writes it. */
class MonitoredSource {
  data: SourceData | null = null;
  error: string | null = null;
  lastCheck: number | null = null;
  failures = 0;
  /** Items dropped from the latest document parsed, good or refused. */
  dropped = 0;
  bands: BandCount | null = null;
  /** Fresh values screening rejected in the latest build (outliers, held jumps). */
  screened: ScreenCount | null = null;
  /** Values rejected as outliers since start, each counted when it is first rejected. */
  outliersTotal = 0;
  /** The state last logged; null before the first look. */
  loggedState: SourceState | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    readonly config: SourceConfig,
    readonly reader: SourceReader,
    private readonly clock: Clock,
    private readonly logger: SourceLogger,
    private readonly onChange: () => void,
  ) {}

  /** Read now; concurrent calls coalesce into one read plus at most one follow-up. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.readOnce().finally(() => {
      this.reading = null;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    const before = this.error;
    try {
      const data = await this.reader.readIfChanged();
      this.lastCheck = this.clock.now();
      this.failures = 0;
      // An unchanged source keeps its error state until it changes (a corrupt file stays corrupt).
      if (data) {
        this.data = data;
        this.dropped = data.dropped;
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
      if (error instanceof NoUsableValuesError) this.dropped = error.dropped;
      this.logFailure(error, before);
      if (this.error !== before) this.onChange();
    }
    this.checkState();
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
    if (this.config.type === 'file') {
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
        bands: this.bands,
        outliers: this.screened?.outliers ?? 0,
        held: this.screened?.held ?? 0,
        outliersTotal: this.outliersTotal,
      },
      now,
    );
  }
}

const EMPTY: ReadonlyMap<string, SourceValue> = new Map();

export function createReader(config: SourceConfig, clock: Clock = systemClock): SourceReader {
  if (config.type === 'file') return new FileSourceReader(config.path!, config.poll_seconds, clock);
  return new HttpSourceReader(config.url!, config.timeout_seconds * 1000, clock);
}

/**
 * Keeps every configured source read, one failure never stopping the others,
 * tells its listener whenever a source's data or health changed, and logs
 * each source's state changes and read failures.
 */
export class SourceMonitor {
  private readonly sources: MonitoredSource[];
  private listener: () => void = () => {};
  private stateTimer: NodeJS.Timeout | null = null;

  constructor(
    configs: SourceConfig[],
    private readonly clock: Clock = systemClock,
    options: SourceMonitorOptions = {},
  ) {
    const readerFor = options.readerFor ?? ((config: SourceConfig) => createReader(config, clock));
    const logger = options.logger ?? SILENT;
    this.sources = configs.map((config) => new MonitoredSource(config, readerFor(config), clock, logger, () => this.listener()));
  }

  onChange(listener: () => void): void {
    this.listener = listener;
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
  }

  get names(): string[] {
    return this.sources.map((source) => source.config.name);
  }

  views(): SourceView[] {
    return this.sources.map((source) => source.view());
  }

  health(now: number): SourceHealth[] {
    return this.sources.map((source) => source.health(now));
  }

  /**
   * How each source's kept values fared against the references' sanity bands.
   * Only the resolver's side knows the bands, so the engine reports them here
   * after it resolves; health and the status page read them from here.
   */
  recordBands(counts: ReadonlyMap<string, BandCount>): void {
    for (const source of this.sources) source.bands = counts.get(source.config.name) ?? null;
    this.checkStates();
  }

  /** What screening rejected of each source's values in the latest build (the resolver's side knows, as for bands). */
  recordScreening(counts: ReadonlyMap<string, ScreenCount>): void {
    for (const source of this.sources) {
      const count = counts.get(source.config.name) ?? null;
      source.screened = count;
      source.outliersTotal += count?.newOutliers ?? 0;
    }
  }

  private checkStates(now = this.clock.now()): void {
    for (const source of this.sources) source.checkState(now);
  }
}
