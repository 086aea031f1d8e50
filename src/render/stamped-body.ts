import { compress, MIN_COMPRESSED_BYTES, SplicedGzip, type Encoding } from './compression.js';
import { OK_HEAD } from './envelope.js';

export interface Rendered {
  body: string | Buffer;
  etag: string;
  /** The prepared body `body` was stamped from, when it can give compressed forms of it. */
  stamped?: StampedBody;
}

/**
 * A response body prepared ahead of time but for its head,
 * `{"success":true,"status":"ok","generated_at":"<time>`. Times are to the
 * second, so the whole body is put together once a second and the same bytes
 * serve every request in that second: no allocation, no copy per request.
 * Its compressed forms follow the same rule: made on the first request that
 * asks for one in a second, then served to every other; gzip's costly part,
 * the tail, is deflated only once for the body's whole life.
 */
export class StampedBody {
  private stamp: string | null = null;
  private head: Buffer = EMPTY_BUFFER;
  private whole: Buffer = EMPTY_BUFFER;
  private gzip: Buffer | null = null;
  private br: Buffer | null = null;
  /** The tail deflated once, on the first request for gzip: each second adds only its head. */
  private gzipTail: SplicedGzip | null = null;

  /** `tail`: everything after the generated_at value, UTF-8 encoded. */
  constructor(private readonly tail: Buffer) {}

  /** `extra` follows the time in the head and must change only with it (the webservice feed's server_time). */
  at(generatedAt: string, extra = ''): Buffer {
    if (generatedAt !== this.stamp) {
      const head = OK_HEAD + generatedAt + extra;
      const whole = Buffer.allocUnsafeSlow(head.length + this.tail.length);
      whole.write(head, 0, 'latin1');
      this.tail.copy(whole, head.length);
      this.whole = whole;
      this.head = whole.subarray(0, head.length);
      this.stamp = generatedAt;
      this.gzip = null;
      this.br = null;
    }
    return this.whole;
  }

  /**
   * Bytes held at most, about: the tail, the stamped whole, and once asked
   * for, the compressed forms (gzip's deflated tail and stamped form, and
   * brotli's; JSON compresses to a third or less, so the three stay under
   * the tail's size). For caches bounded by size.
   */
  get size(): number {
    return OK_HEAD.length + this.tail.length * (this.compressible ? 3 : 2);
  }

  /** Whether the body is worth compressing (decided on its tail, so before any stamp). */
  get compressible(): boolean {
    return this.tail.length + OK_HEAD.length > MIN_COMPRESSED_BYTES;
  }

  /** The body last returned by `at`, compressed; null when it is too small to be worth it. */
  encoded(encoding: Encoding): Buffer | null {
    if (!this.compressible) return null;
    if (encoding === 'gzip') return (this.gzip ??= (this.gzipTail ??= new SplicedGzip(this.tail)).with(this.head));
    return (this.br ??= compress(this.whole, 'br'));
  }
}

const EMPTY_BUFFER = Buffer.alloc(0);
