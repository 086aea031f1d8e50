import type { HistoryRepository } from '../../store/candle-tables.js';
import { StoredReading } from './stored-reading.js';

export const ACTIVITY_BUCKET_MS = 10 * 60_000;
/** Six hours of ten-minute buckets. */
export const ACTIVITY_BUCKETS = 36;

/**
 * Values served per source and ten minutes over the last six hours: the
 * status page draws it, so a source that lags or breaks shows as a dip while
 * another carries its references. Counted as the recorder records; at start
 * it is filled from the stored minute candles (by the source of each close).
 */
export class SourceActivity {
  private readonly bySource = new Map<string, Map<number, number>>();

  count(source: string, at: number, points = 1): void {
    const bucket = at - (at % ACTIVITY_BUCKET_MS);
    let buckets = this.bySource.get(source);
    if (!buckets) this.bySource.set(source, (buckets = new Map()));
    const before = buckets.get(bucket);
    buckets.set(bucket, (before ?? 0) + points);
    if (before === undefined) {
      for (const old of buckets.keys()) if (old <= bucket - ACTIVITY_BUCKETS * ACTIVITY_BUCKET_MS) buckets.delete(old);
    }
  }

  /** Fill from the store, once, before anything is counted. */
  async load(repository: HistoryRepository, now: number): Promise<void> {
    if (this.bySource.size > 0) return;
    const since = now - (now % ACTIVITY_BUCKET_MS) - (ACTIVITY_BUCKETS - 1) * ACTIVITY_BUCKET_MS;
    for (const row of await repository.activity(since, ACTIVITY_BUCKET_MS)) this.count(row.source, row.bucket, row.points);
  }

  /** The last six hours of a source, oldest bucket first, zero where nothing was served. */
  series(source: string, now: number): number[] {
    const buckets = this.bySource.get(source);
    const newest = now - (now % ACTIVITY_BUCKET_MS);
    const out: number[] = [];
    for (let i = ACTIVITY_BUCKETS - 1; i >= 0; i--) out.push(buckets?.get(newest - i * ACTIVITY_BUCKET_MS) ?? 0);
    return out;
  }
}

/** How old the store's counts may be before a status page asks for them again. */
const STORED_REFRESH_MS = 60_000;

/**
 * The same six hours read from the stored minute candles, for a node that
 * does not record (with several nodes only the ingest leader does): loaded in
 * the background when asked for and older than a minute, so a page never
 * waits on the store. Counts follow each minute candle's closing source, as
 * the leader's own counts do after a restart.
 */
export class StoredActivity {
  private readonly stored: StoredReading<SourceActivity>;

  /** `reachable`: whether the store is known to answer (see StoredReading). */
  constructor(repository: HistoryRepository, reachable: () => boolean) {
    const load = async (now: number) => {
      const fresh = new SourceActivity();
      await fresh.load(repository, now);
      return fresh;
    };
    this.stored = new StoredReading(load, reachable, STORED_REFRESH_MS, 5_000);
  }

  /** The last six hours of a source as last read; null until the first read lands. Starts a fresh read when due. */
  series(source: string, now: number): number[] | null {
    const current = this.stored.get(now);
    return current ? current.series(source, now) : null;
  }
}
