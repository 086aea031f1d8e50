import { LRUCache } from 'lru-cache';
import { detached, ENTRY_OVERHEAD_BYTES, stringBytes } from '../domain/cache-size.js';
import { compress, MIN_COMPRESSED_BYTES, type Encoding } from './compression.js';

export interface CompressedOnceBounds {
  maxBytes: number;
  maxForms: number;
}

/**
 * 16 MB of forms with their keys, and at most 4,096 of them: a form is of a
 * body over 1 KB, so the count binds only on forms of a few hundred bytes.
 */
const BOUNDS: CompressedOnceBounds = { maxBytes: 16 * 1024 * 1024, maxForms: 4_096 };
/** A body's head, which holds its `generated_at` (to the second): part of what a form is kept by. */
const HEAD_CHARS = 96;

/**
 * Compressed forms of bodies that have no per-snapshot form of their own
 * (history ranges, a moment's values), kept by ETag and head: a body is
 * compressed at most once a second per coding (its `generated_at` is to the
 * second, and a compressed body must say what the plain one says), however
 * many clients ask for it. The least recently used go first.
 */
export class CompressedOnce {
  private readonly forms: LRUCache<string, Buffer>;

  constructor(bounds: CompressedOnceBounds = BOUNDS) {
    this.forms = new LRUCache({ max: bounds.maxForms, maxSize: bounds.maxBytes, sizeCalculation: (form, key) => ENTRY_OVERHEAD_BYTES + stringBytes(key) + form.length });
  }

  /** Forms and bytes held now (for tests and metrics). */
  get held(): { forms: number; bytes: number } {
    return { forms: this.forms.size, bytes: this.forms.calculatedSize };
  }

  /** The body in `encoding`, or null when it is too small to be worth it. */
  get(etag: string, body: string | Buffer, encoding: Encoding): Buffer | null {
    if (body.length <= MIN_COMPRESSED_BYTES) return null;
    const head = typeof body === 'string' ? body.slice(0, HEAD_CHARS) : body.subarray(0, HEAD_CHARS).toString('latin1');
    const key = `${encoding} ${etag} ${head}`;
    let form = this.forms.get(key);
    if (!form) {
      form = compress(typeof body === 'string' ? Buffer.from(body) : body, encoding);
      // The key holds a slice of the body: kept as it is, it would keep the whole body too.
      this.forms.set(detached(key), form);
    }
    return form;
  }
}
