/** A run of rendered candles: their starts (ascending) and JSON text, with a fingerprint of the text. */
export interface CandleBlock {
  starts: number[];
  /** The candle objects joined by commas; one string, so the cache holds one object per block, not one per candle. */
  json: string;
  /** Where each candle's object ends in `json`. */
  ends: number[];
  hash: number;
  /** For a block still open at the time it was loaded: the recorder's version of the reference then. */
  liveVersion: number | null;
}

/**
 * Rendered candle blocks, least recently used first out, bounded by the
 * number of candles held (a candle's fragment is about 150 bytes). A plain
 * Map keeps insertion order, so re-inserting on use is the whole LRU.
 */
export class BlockCache {
  private readonly blocks = new Map<string, CandleBlock>();
  private held = 0;

  constructor(private readonly maxCandles: number) {}

  get size(): number {
    return this.held;
  }

  get(key: string): CandleBlock | undefined {
    const block = this.blocks.get(key);
    if (block) {
      this.blocks.delete(key);
      this.blocks.set(key, block);
    }
    return block;
  }

  set(key: string, block: CandleBlock): void {
    this.delete(key);
    if (block.starts.length > this.maxCandles) return;
    this.blocks.set(key, block);
    this.held += block.starts.length;
    for (const [oldest, old] of this.blocks) {
      if (this.held <= this.maxCandles) break;
      this.blocks.delete(oldest);
      this.held -= old.starts.length;
    }
  }

  delete(key: string): void {
    const old = this.blocks.get(key);
    if (!old) return;
    this.blocks.delete(key);
    this.held -= old.starts.length;
  }

  clear(): void {
    this.blocks.clear();
    this.held = 0;
  }
}
