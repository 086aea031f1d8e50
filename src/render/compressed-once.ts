import { compress, MIN_COMPRESSED_BYTES, type Encoding } from './compression.js';

/** What the compressed forms may hold in all; the least recently used go first. */
const MAX_BYTES = 16 * 1024 * 1024;
/** A body's head, which holds its `generated_at` (to the second): part of what a form is kept by. */
const HEAD_CHARS = 96;

/**
 * Compressed forms of bodies that have no per-snapshot form of their own
 * (history ranges, a moment's values), kept by ETag and head: a body is
 * compressed at most once a second per coding (its `generated_at` is to the
 * second, and a compressed body must say what the plain one says), however
 * many clients ask for it.
 */
export class CompressedOnce {
  private readonly forms = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes = MAX_BYTES) {}

  /** The body in `encoding`, or null when it is too small to be worth it. */
  get(etag: string, body: string | Buffer, encoding: Encoding): Buffer | null {
    if (body.length <= MIN_COMPRESSED_BYTES) return null;
    const head = typeof body === 'string' ? body.slice(0, HEAD_CHARS) : body.subarray(0, HEAD_CHARS).toString('latin1');
    const key = `${encoding} ${etag} ${head}`;
    const held = this.forms.get(key);
    if (held) {
      // Map order is insertion order: re-inserting marks it as the most recently used.
      this.forms.delete(key);
      this.forms.set(key, held);
      return held;
    }
    const form = compress(typeof body === 'string' ? Buffer.from(body) : body, encoding);
    this.forms.set(key, form);
    this.bytes += form.length;
    for (const [oldest, old] of this.forms) {
      if (this.bytes <= this.maxBytes) break;
      this.forms.delete(oldest);
      this.bytes -= old.length;
    }
    return form;
  }
}
