import { systemClock, type Clock } from '../domain/clock.js';
import type { SourceValue } from '../domain/rate.js';
import type { SourceView } from '../domain/resolve.js';
import { FileSourceReader } from './file.js';
import { HttpSourceReader, nextDelayMs } from './http.js';
import type { SourceData } from './parse.js';
import { describeReadError, type SourceReader } from './reader.js';

export interface SourceConfig {
  name: string;
  type: 'file' | 'http';
  path?: string;
  url?: string;
  max_age_seconds: number;
  poll_seconds: number;
  timeout_seconds: number;
}

export type SourceState = 'active' | 'degraded' | 'down';

export interface SourceHealth {
  name: string;
  state: SourceState;
  /** When the source's kept data was last updated (epoch ms). */
  last_update: number | null;
  age_seconds: number | null;
  error: string | null;
  /** When the source was last read or polled (epoch ms). */
  last_check: number | null;
}

/** One source with its last good data and its health; only the monitor writes it. */
class MonitoredSource {
  data: SourceData | null = null;
  error: string | null = null;
  lastCheck: number | null = null;
  failures = 0;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    readonly config: SourceConfig,
    readonly reader: SourceReader,
    private readonly clock: Clock,
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
        this.error = null;
        this.onChange();
      } else if (before !== null && this.config.type === 'http') {
        this.error = null;
        this.onChange();
      }
    } catch (error) {
      this.lastCheck = this.clock.now();
      this.failures++;
      // A bad read never replaces the last good data.
      this.error = describeReadError(error);
      if (this.error !== before) this.onChange();
    }
  }

  start(): void {
    if (this.config.type === 'file') {
      this.reader.start(() => void this.refresh());
      return;
    }
    const loop = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.refresh().then(loop), nextDelayMs(this.config.poll_seconds, this.failures));
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
    const lastUpdate = this.data?.dataTime ?? null;
    const age = lastUpdate === null ? null : Math.max(0, Math.floor((now - lastUpdate) / 1000));
    let state: SourceState = 'active';
    let error = this.error;
    if (!this.data) state = 'down';
    else if (this.error !== null) state = 'degraded';
    else if (age !== null && age > this.config.max_age_seconds) {
      state = 'degraded';
      error = `data older than ${this.config.max_age_seconds} s`;
    }
    return { name: this.config.name, state, last_update: lastUpdate, age_seconds: age, error, last_check: this.lastCheck };
  }
}

const EMPTY: ReadonlyMap<string, SourceValue> = new Map();

export function createReader(config: SourceConfig, clock: Clock = systemClock): SourceReader {
  if (config.type === 'file') return new FileSourceReader(config.path!, config.poll_seconds, clock);
  return new HttpSourceReader(config.url!, config.timeout_seconds * 1000, clock);
}

/**
 * Keeps every configured source read, one failure never stopping the others,
 * and tells its listener whenever a source's data or health changed.
 */
export class SourceMonitor {
  private readonly sources: MonitoredSource[];
  private listener: () => void = () => {};

  constructor(configs: SourceConfig[], clock: Clock = systemClock, readerFor: (config: SourceConfig) => SourceReader = (config) => createReader(config, clock)) {
    this.sources = configs.map((config) => new MonitoredSource(config, readerFor(config), clock, () => this.listener()));
  }

  onChange(listener: () => void): void {
    this.listener = listener;
  }

  /** First read of every source (so the first snapshot has data), then watching and polling. */
  async start(): Promise<void> {
    await Promise.all(this.sources.map((source) => source.refresh()));
    for (const source of this.sources) source.start();
  }

  stop(): void {
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
}
