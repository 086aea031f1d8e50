/**
 * Item keys of a source document that no catalogue reference reads: a typo
 * (`usd_fre`), a key renamed upstream, or items meant for someone else. They
 * are skipped, so without a count a misspelt document would look healthy.
 */
export interface UnknownKeys {
  /** Items whose key matches no reference (a key repeated in one document counts each time). */
  count: number;
  /** The first few of those keys, in document order, each cut to a readable length. */
  sample: readonly string[];
}

/** Keys named at most, per source: a hostile document of a million keys costs no more than this. */
export const UNKNOWN_KEY_SAMPLE = 20;
/** A named key is cut to this many characters (a catalogue key has at most 64). */
export const UNKNOWN_KEY_CHARS = 64;

export const NO_UNKNOWN_KEYS: UnknownKeys = Object.freeze({ count: 0, sample: Object.freeze([]) as readonly string[] });

/** Counts the unknown keys of one document and keeps the first UNKNOWN_KEY_SAMPLE of them. */
export class UnknownKeyTally {
  private count = 0;
  private readonly sample: string[] = [];

  add(key: string): void {
    this.count++;
    if (this.sample.length >= UNKNOWN_KEY_SAMPLE) return;
    const shown = key.length > UNKNOWN_KEY_CHARS ? `${cut(key, UNKNOWN_KEY_CHARS - 1)}…` : key;
    // A fresh copy: the parser's key may be a slice of the whole chunk of text it was read from.
    if (!this.sample.includes(shown)) this.sample.push(Buffer.from(shown, 'utf8').toString('utf8'));
  }

  result(): UnknownKeys {
    return this.count === 0 ? NO_UNKNOWN_KEYS : { count: this.count, sample: this.sample };
  }
}

/** The first `length` UTF-16 units of `text`, one fewer rather than half a surrogate pair. */
function cut(text: string, length: number): string {
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

export function sameUnknownKeys(a: UnknownKeys, b: UnknownKeys): boolean {
  return a.count === b.count && a.sample.length === b.sample.length && a.sample.every((key, i) => key === b.sample[i]);
}

/** "3 item keys match no reference: usd_fre, eur_fre, gold" (", …" when the sample names only some). */
export function describeUnknownKeys(keys: UnknownKeys): string {
  const some = keys.count > keys.sample.length ? ', …' : '';
  return `${keys.count} item key${keys.count === 1 ? '' : 's'} ${keys.count === 1 ? 'matches' : 'match'} no reference: ${keys.sample.join(', ')}${some}`;
}
