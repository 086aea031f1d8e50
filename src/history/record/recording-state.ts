import type { HistoryRepository } from '../../store/candle-tables.js';
import { StoredReading } from './stored-reading.js';

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
  private readonly stored: StoredReading<number | null>;

  /** `reachable`: whether the store is known to answer (see StoredReading). */
  constructor(repository: HistoryRepository, reachable: () => boolean) {
    this.stored = new StoredReading(() => repository.newestClose(), reachable, REFRESH_MS, 2_000);
  }

  /** The newest close as last read; null until the first read lands. Starts a fresh read when due. */
  value(now: number): number | null {
    return this.stored.get(now);
  }
}
