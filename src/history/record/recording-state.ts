import type { HistoryRepository } from '../../store/candle-tables.js';

/** Candle recording as one node sees it, for the status endpoints (docs/api.md#status). */
export interface RecordingState {
  /** Days one-minute candles are kept; hourly and daily candles are kept for good. */
  minuteDays: number;
  /** When the newest value written to the history was recorded; null before the first, or before the store was first read. */
  lastWritten: number | null;
  /** Whether this node records (the ingest leader does; with one process, that process). */
  recording: boolean;
  /** Candles this node recorded and has not written yet (held while the store is away). */
  pending: number;
}

/** How old the store's answer may be before a status request asks again. */
const REFRESH_MS = 10_000;

/**
 * The newest value in the stored history, for a node that does not record
 * (with several nodes only the ingest leader does) or has not written yet:
 * read in the background when asked for and older than ten seconds, so a
 * status request never waits on the store.
 */
export class StoredNewest {
  private newest: number | null = null;
  private readAt = -Infinity;
  private reading = false;

  constructor(
    private readonly repository: HistoryRepository,
    /** Whether the store is known to answer: while it does not, no read is tried (its ping brings it back). */
    private readonly reachable: () => boolean,
  ) {}

  /** The newest close as last read; null until the first read lands. Starts a fresh read when due. */
  value(now: number): number | null {
    if (!this.reading && now - this.readAt >= REFRESH_MS && this.reachable()) void this.refresh(now);
    return this.newest;
  }

  private async refresh(now: number): Promise<void> {
    this.reading = true;
    try {
      this.newest = await this.repository.newestClose();
      this.readAt = now;
    } catch {
      // The store's health is reported where it is watched; the status keeps what it last had and asks again.
      this.readAt = now - REFRESH_MS + 2_000;
    } finally {
      this.reading = false;
    }
  }
}
