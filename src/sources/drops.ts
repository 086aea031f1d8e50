/**
 * Why an item of a source document was dropped rather than served. A fixed
 * set of codes: the status pages, the log and `expand=sources` name the
 * kind of problem, never the document's own text (a price written "N/A" is shown
 * as `not_a_number`, not as "N/A").
 */
export const DROP_REASONS = ['no_match', 'several_matches', 'not_a_number', 'bad_grouping', 'mixed_digits', 'not_positive', 'bad_time', 'ahead', 'no_currency', 'bad_row'] as const;

export type DropReason = (typeof DROP_REASONS)[number];

/** What each code means, in the words /v1/status and the log use. */
export const DROP_REASON_TEXT: Record<DropReason, string> = {
  no_match: 'path matched nothing',
  several_matches: 'path matched more than one value',
  not_a_number: 'value is not a number',
  bad_grouping: 'digit grouping is not in threes',
  mixed_digits: 'value mixes digit systems',
  not_positive: 'value is zero or negative',
  bad_time: 'time missing or unreadable',
  ahead: 'stamped ahead of the clock',
  no_currency: 'currency not in the document',
  bad_row: 'row is not source_key,value[,updated_at]',
};

/** One reason's share of a document's dropped items. */
export interface DropCount {
  reason: DropReason;
  count: number;
  /** The first source keys dropped for it: only keys the config or the catalogue names, never one only the document wrote. */
  source_keys: readonly string[];
}

/** Source keys named per reason at most: a catalogue of hundreds costs no more than this. */
export const DROP_SAMPLE = 20;

export const NO_DROPS: readonly DropCount[] = Object.freeze([]);

/** Counts the dropped items of one document by reason, naming the first few keys of each. */
export class DropTally {
  private readonly counts = new Map<DropReason, { count: number; keys: string[] }>();
  total = 0;

  /** One dropped item; `key` only when it may be shown (a catalogue or configured key). */
  add(reason: DropReason, key: string | null = null, times = 1): void {
    if (times <= 0) return;
    this.total += times;
    let entry = this.counts.get(reason);
    if (!entry) this.counts.set(reason, (entry = { count: 0, keys: [] }));
    entry.count += times;
    if (key !== null && entry.keys.length < DROP_SAMPLE && !entry.keys.includes(key)) entry.keys.push(key);
  }

  count(reason: DropReason): number {
    return this.counts.get(reason)?.count ?? 0;
  }

  /** In the fixed order of DROP_REASONS, so two reads of one document compare equal. */
  result(): readonly DropCount[] {
    if (this.counts.size === 0) return NO_DROPS;
    return DROP_REASONS.filter((reason) => this.counts.has(reason)).map((reason) => {
      const { count, keys } = this.counts.get(reason)!;
      return { reason, count, source_keys: keys };
    });
  }
}

/** "value is not a number: 2 (ir_fx_free_usd, …); path matched nothing: 1": for the log. */
export function describeDrops(drops: readonly DropCount[]): string {
  return drops
    .map((drop) => {
      const named = drop.source_keys.length > 0 ? ` (${drop.source_keys.join(', ')}${drop.count > drop.source_keys.length ? ', …' : ''})` : '';
      return `${DROP_REASON_TEXT[drop.reason]}: ${drop.count}${named}`;
    })
    .join('; ');
}

export function sameDrops(a: readonly DropCount[], b: readonly DropCount[]): boolean {
  return a.length === b.length && a.every((drop, i) => drop.reason === b[i]!.reason && drop.count === b[i]!.count && drop.source_keys.join('\n') === b[i]!.source_keys.join('\n'));
}
