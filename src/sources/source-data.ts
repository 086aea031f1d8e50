import type { SourceValue } from '../domain/rate.js';
import { NO_DROPS, type DropCount, type DropReason } from './drops.js';
import type { UnknownKeys } from './unknown-keys.js';

/** What one successful read of a source yields, whatever its format. */
export interface SourceData {
  items: Map<string, SourceValue>;
  /** When the source as a whole was last updated (epoch ms): its age is measured from here. */
  dataTime: number;
  /** Items present but unusable: not a positive finite number, or with a bad or future timestamp. */
  dropped: number;
  /** Of the dropped items, those stamped further ahead of the clock than the allowed skew. */
  ahead: number;
  /** Items whose key no catalogue reference reads (always none when the parser was not told the keys). */
  unknownKeys: UnknownKeys;
  /** The dropped items by reason (the same total as `dropped`). */
  dropReasons: readonly DropCount[];
  /** Why each catalogue source key that was dropped was, for `expand=sources` (keys the catalogue does not read are only counted). */
  droppedKeys: ReadonlyMap<string, DropReason>;
}

/**
 * How far ahead of the receive time a timestamp may be, by default. A stamp
 * within it is a small clock difference and is clamped to the receive time
 * (a value is never served as updated in the future); beyond it the clock is
 * wrong or the stamp a typo, and such a value would otherwise count as fresh
 * for as long as it is ahead, so it is refused.
 */
export const DEFAULT_CLOCK_SKEW_MS = 30_000;

/** The times a document is read against, known only once it has been received. */
export interface TimeRules {
  /** What a bare number is dated with when the document has no `updated_at`: the file's mtime or `Last-Modified`. */
  fallbackTime: number;
  /** The receive time. */
  now: number;
  /** How far ahead of `now` a timestamp is clamped rather than refused; default DEFAULT_CLOCK_SKEW_MS. */
  skewMs?: number;
}

/** A source document that cannot be used at all; its message is safe to show on the status page. */
export class SourceFormatError extends Error {}

/**
 * A well-formed document without a single usable value (`items` empty, or every
 * item dropped). It must not replace the source's last good data, nor leave
 * the source looking healthy while every value comes from elsewhere.
 */
export class NoUsableValuesError extends SourceFormatError {
  constructor(
    readonly dropped: number,
    readonly ahead = 0,
    readonly reasons: readonly DropCount[] = NO_DROPS,
  ) {
    super(dropped === 0 ? 'no usable values (items is empty)' : `no usable values (${dropped} dropped${ahead > 0 ? `, ${ahead} of them stamped ahead of the clock` : ''})`);
  }
}
