/** FNV-1a, 32 bit: a cheap, stable fingerprint for ETags (not for security). */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Fold a fingerprint into a running one; order matters. */
export function combineHash(running: number, next: number): number {
  return Math.imul(running ^ next, 0x01000193) >>> 0;
}

export function etagOf(prefix: string, hash: number): string {
  return `"${prefix}${hash.toString(36)}"`;
}
