import { createHash, randomInt } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PREFIX = 'nrk_';
/** What a well-formed key looks like; anything else is rejected before hashing. */
export const KEY_FORMAT = /^nrk_[0-9A-Za-z]{32}$/;

function base62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** `nrk_` + 32 random base62 characters (~190 bits). */
export function generateKey(): string {
  return KEY_PREFIX + base62(32);
}

/** The short public id used to list and revoke a key. */
export function generateKeyId(): string {
  return `key_${base62(12)}`;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
