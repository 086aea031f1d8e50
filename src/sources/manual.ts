import type { Clock } from '../domain/clock.js';
import type { SourceValue } from '../domain/rate.js';
import type { ManualPrice } from '../store/manual-price-repository.js';
import type { SourceData } from './parse.js';
import { SourceReadError, type SourceReader } from './reader.js';
import { NO_DROPS, type DropReason } from './drops.js';
import { UnknownKeyTally } from './unknown-keys.js';

/** What the reader needs of the store: the prices revision, a source's prices and its last change. */
const NO_DROPPED_KEYS: ReadonlyMap<string, DropReason> = new Map();

export interface ManualPriceStore {
  revision(): Promise<number>;
  current(source: string): Promise<ManualPrice[]>;
  lastChange(source: string): Promise<number | null>;
}

export interface ManualReaderOptions {
  /** How often the store's prices revision is looked at. */
  pollMs: number;
  /** Subscribe to change notices that concern prices (a CLI change announced over Redis); returns the unsubscribe. */
  onNotice?: (hint: () => void) => () => void;
}

/**
 * A manual source: the prices an operator set with `nerkh prices set`, read
 * from the store. It rereads them only when the store's prices revision
 * moved (polled, and looked at once on a change notice), so every node that
 * leads applies a change within a poll. Each price is dated by when it was
 * set and carries its expiry, after which it is no longer fresh.
 */
export class ManualSourceReader implements SourceReader {
  /** The revision the kept data was read at; null: read at the next look (first, or after a failure). */
  private seen: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => void) | null = null;

  constructor(
    private readonly name: string,
    private readonly store: ManualPriceStore,
    /** A reference key to the source key its values are filed under; undefined for a key the catalogue no longer has. */
    private readonly sourceKeyOf: (reference: string) => string | undefined,
    private readonly clock: Clock,
    private readonly options: ManualReaderOptions,
  ) {}

  async readIfChanged(): Promise<SourceData | null> {
    let revision: number;
    let prices: ManualPrice[];
    let lastChange: number | null;
    try {
      revision = await this.store.revision();
      if (revision === this.seen) return null;
      [prices, lastChange] = await Promise.all([this.store.current(this.name), this.store.lastChange(this.name)]);
    } catch {
      // Read everything again once the store answers: a failure leaves nothing to compare with.
      this.seen = null;
      throw new SourceReadError('prices not readable from the store');
    }
    this.seen = revision;
    return this.toData(prices, lastChange);
  }

  private toData(prices: readonly ManualPrice[], lastChange: number | null): SourceData {
    const now = this.clock.now();
    const items = new Map<string, SourceValue>();
    // A price kept for a reference the catalogue no longer has is told like any item key no reference reads.
    const unknown = new UnknownKeyTally();
    for (const price of prices) {
      const sourceKey = this.sourceKeyOf(price.reference);
      if (sourceKey === undefined) {
        unknown.add(price.reference);
        continue;
      }
      // Set on another host with a clock ahead: never dated in the future.
      const value: SourceValue = { raw: price.value, value: Number(price.value), updatedAt: Math.min(price.set_at, now) };
      if (price.expires_at !== null) value.expiresAt = price.expires_at;
      items.set(sourceKey, value);
    }
    // The source's own time is its last change; a desk that never set a price is as of now.
    return { items, dataTime: Math.min(lastChange ?? now, now), dropped: 0, ahead: 0, unknownKeys: unknown.result(), dropReasons: NO_DROPS, droppedKeys: NO_DROPPED_KEYS };
  }

  start(onHint: () => void): void {
    this.timer = setInterval(onHint, this.options.pollMs);
    this.timer.unref();
    this.unlisten = this.options.onNotice?.(onHint) ?? null;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unlisten?.();
    this.unlisten = null;
  }
}
