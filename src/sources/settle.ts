import type { SourceValue } from '../domain/rate.js';
import { DropTally, type DropReason } from './drops.js';
import { DEFAULT_CLOCK_SKEW_MS, NoUsableValuesError, SourceFormatError, type SourceData, type TimeRules } from './source-data.js';
import { UnknownKeyTally } from './unknown-keys.js';

/**
 * An item as read, before the document's time is known: a value whose NaN
 * `updatedAt` stands for "the document's time", or why it was dropped.
 */
export type PendingItem = SourceValue | DropReason;

/** The `updatedAt` of a value dated by its document (or the fallback time). */
export const NO_TIME = Number.NaN;

/** Items read but not kept (their key is no catalogue source key): enough to count them, name a few, and date the document as if they were. */
export class OtherItems {
  /** Unusable ones by reason; their keys are never named (the document wrote them, not the config). */
  readonly drops = new DropTally();
  /** Usable items dated by the document (or the fallback time). */
  undated = 0;
  /** Own times of the other usable items (8 bytes each, never a key or a value). */
  readonly times: number[] = [];
  readonly keys = new UnknownKeyTally();

  add(key: string, value: PendingItem): void {
    this.keys.add(key);
    if (typeof value === 'string') this.drops.add(value);
    else if (Number.isNaN(value.updatedAt)) this.undated++;
    else this.times.push(value.updatedAt);
  }
}

/**
 * Settle a document's times and count what it dropped, the same for every
 * format: an undated value takes the document's time, else the fallback
 * time. Any stamp within the skew ahead of `now` is clamped to `now`; beyond
 * it an item is dropped (as `ahead`), and a document time that far ahead
 * refuses the whole document. A document left without one usable value is
 * refused too. Works on the pending items in place (a second map of a large
 * document would double its cost).
 */
export function settle(documentTime: number | null, pending: Map<string, PendingItem>, others: OtherItems, rules: TimeRules): SourceData {
  const skewMs = rules.skewMs ?? DEFAULT_CLOCK_SKEW_MS;
  const latest = rules.now + skewMs;
  if (documentTime !== null && documentTime > latest) throw new SourceFormatError(`updated_at is ${aheadText(documentTime - rules.now)} ahead of the clock (more than ${skewMs / 1000} s allowed)`);
  if (documentTime !== null) documentTime = Math.min(documentTime, rules.now);

  const defaultTime = documentTime ?? rules.fallbackTime;
  const drops = new DropTally();
  const droppedKeys = new Map<string, DropReason>();
  let newest = -Infinity;
  for (const [sourceKey, value] of pending) {
    const reason: DropReason | null = typeof value === 'string' ? value : (Number.isNaN(value.updatedAt) ? defaultTime : value.updatedAt) > latest ? 'ahead' : null;
    if (reason !== null) {
      drops.add(reason, sourceKey);
      droppedKeys.set(sourceKey, reason);
      pending.delete(sourceKey);
      continue;
    }
    const item = value as SourceValue;
    item.updatedAt = Math.min(Number.isNaN(item.updatedAt) ? defaultTime : item.updatedAt, rules.now);
    if (item.updatedAt > newest) newest = item.updatedAt;
  }
  // Items not kept count as they would have: usable (and dating the document), dropped, or ahead.
  for (const drop of others.drops.result()) drops.add(drop.reason, null, drop.count);
  let othersUsable = 0;
  if (others.undated > 0 && defaultTime > latest) drops.add('ahead', null, others.undated);
  else if (others.undated > 0) {
    othersUsable += others.undated;
    newest = Math.max(newest, Math.min(defaultTime, rules.now));
  }
  for (const time of others.times) {
    if (time > latest) drops.add('ahead');
    else {
      othersUsable++;
      newest = Math.max(newest, Math.min(time, rules.now));
    }
  }
  const ahead = drops.count('ahead');
  if (pending.size === 0 && othersUsable === 0) throw new NoUsableValuesError(drops.total, ahead, drops.result());
  // Every dropped item was deleted above: what is left are usable values.
  return {
    items: pending as Map<string, SourceValue>,
    dataTime: documentTime ?? newest,
    dropped: drops.total,
    ahead,
    unknownKeys: others.keys.result(),
    dropReasons: drops.result(),
    droppedKeys,
  };
}

function aheadText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}
