import { compress, MIN_COMPRESSED_BYTES, type Encoding } from './compression.js';

/**
 * A body prepared ahead of time, as the pipeline writes it (reply.ts):
 * `StampedBody` (the success envelope, stamped with the time each second) and
 * `FixedBody` (a peer's shape, the same bytes for its whole life) are both one.
 */
export interface PreparedBody {
  /** The bytes to send; `generatedAt` and `extra` are the envelope's head, which a fixed body has none of. */
  at(generatedAt: string, extra?: string): Buffer;
  /** The body last returned by `at`, compressed; null when it is too small to be worth it. */
  encoded(encoding: Encoding): Buffer | null;
  readonly compressible: boolean;
  /** Bytes held at most, about, its compressed forms included (for caches bounded by size). */
  readonly size: number;
}

/**
 * A body with no time in it (the compatibility routes answer in their peer's
 * shape, which has no envelope): made once per snapshot, each compressed form
 * made on the first request that asks for it and kept for the body's life.
 */
export class FixedBody implements PreparedBody {
  private gzip: Buffer | null = null;
  private br: Buffer | null = null;

  constructor(private readonly whole: Buffer) {}

  at(): Buffer {
    return this.whole;
  }

  get compressible(): boolean {
    return this.whole.length > MIN_COMPRESSED_BYTES;
  }

  /** The body and, once asked for, its two compressed forms (each well under the body's size for JSON). */
  get size(): number {
    return this.whole.length * (this.compressible ? 2 : 1);
  }

  encoded(encoding: Encoding): Buffer | null {
    if (!this.compressible) return null;
    if (encoding === 'gzip') return (this.gzip ??= compress(this.whole, 'gzip'));
    return (this.br ??= compress(this.whole, 'br'));
  }
}
