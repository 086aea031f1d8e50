import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD_BYTES } from '../../domain/cache-size.js';
import { fnv1a } from '../../domain/hash.js';

/** A run of rendered candles: their starts (ascending) and JSON text, with a fingerprint of the text. */
export interface CandleBlock {
  readonly starts: readonly number[];
  /** The candle objects joined by commas; one string, so the cache holds one object per block, not one per candle. */
  readonly json: string;
  /** Where each candle's object ends in `json`. */
  readonly ends: readonly number[];
  readonly hash: number;
  /** For a block still open at the time it was loaded: the recorder's version of the reference then. */
  readonly liveVersion: number | null;
}

/** Every settled block without candles is this one object: such an entry costs its key and a slot, nothing more. */
export const EMPTY_SETTLED_BLOCK: CandleBlock = Object.freeze({ starts: Object.freeze([]), json: '', ends: Object.freeze([]), hash: fnv1a(''), liveVersion: null });

export interface BlockCacheBounds {
  maxBytes: number;
  maxBlocks: number;
}

/**
 * Some 40 MB, about 250,000 candles; and at most 5,000 blocks, which a full
 * cache of 250-candle blocks never nears (about 1,000 of them fill the
 * bytes), so the count binds only on runs of small or empty blocks.
 */
export const BLOCK_CACHE_BOUNDS: BlockCacheBounds = { maxBytes: 40 * 1024 * 1024, maxBlocks: 5_000 };

/**
 * What a block costs in memory, roughly: its text (candle JSON is ASCII, a
 * byte a character), a start and an end per candle (8 bytes each), its key
 * and the entry itself, so an empty block costs something too.
 */
export function blockBytes(key: string, block: CandleBlock): number {
  return ENTRY_OVERHEAD_BYTES + key.length + block.json.length + block.starts.length * 16;
}

/** Rendered candle blocks, least recently used first out, bounded in bytes and in blocks. */
export class BlockCache extends LRUCache<string, CandleBlock> {
  constructor(bounds: BlockCacheBounds = BLOCK_CACHE_BOUNDS) {
    super({ max: bounds.maxBlocks, maxSize: bounds.maxBytes, sizeCalculation: (block, key) => blockBytes(key, block) });
  }
}
