/**
 * What one entry costs a cache beyond its key's and value's own bytes: the
 * cache's slots and the value's object. Measured on V8 at about 100 bytes for
 * an lru-cache entry and 230 for a Map entry holding a small object, so this
 * errs high. Counting it means an empty entry is never free: a cache bounded
 * in bytes is then also bounded in entries, whatever the values hold.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

/** The most a string can take in memory: V8 keeps Latin-1 text at one byte a character, any other at two. */
export function stringBytes(text: string): number {
  return text.length * 2;
}

/**
 * A copy of `text` that shares no memory with the string it was cut from.
 * V8 keeps a slice of a long string (a request's URL, a response body) as a
 * view into the whole, so a short key or note cut from a long string, once
 * kept, would keep all of it: 96 characters of a 150 KB body hold 150 KB.
 * Anything kept past the request that was cut from request or body text goes
 * through this first.
 */
export function detached(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
