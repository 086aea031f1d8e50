import type { Catalogue } from '../catalogue/catalogue.js';
import { etagOf, fnv1a } from '../domain/hash.js';
import type { Rate, RateTime } from '../domain/rate.js';
import type { Snapshot } from '../live/snapshot.js';
import { FixedBody } from '../render/fixed-body.js';
import { leftOutHeaders, noneLeftOut } from './left-out.js';
import { PeerEntries } from './peer-entries.js';
import { readNavasanFile, type Mapped, type NavasanEntry } from './peers.js';
import { navasanDateTime, unixSeconds } from './peer-time.js';
import type { PeerAnswer } from './peer-answer.js';

/** Per snapshot: answers of a few items (well under 1 KB each) and the whole list (about 10 KB). */
const BOUNDS = { entries: 2_000, bytes: 4 * 1024 * 1024 };
const EVERY_REFERENCE = Symbol('every reference');
/** The key of an answer asked without `item`: every mapped item the plan allows. */
const ALL_ITEMS = '';

/**
 * navasan's `/latest/`: `{"<item>": {"value": "<toman or thousands of toman,
 * exact>", "change": <number|null>, "timestamp": <unix s>, "date": "<Jalali
 * date and Tehran time>"}, …}`, prepared per snapshot, allowance and item list
 * like detail's answers: a client polling the same items costs a few map
 * lookups until the snapshot it sees changes. Items unknown, outside the plan
 * or without a value are left out and named in headers; stale ones are
 * served and named.
 */
export class NavasanLatest extends PeerEntries<NavasanEntry, PeerAnswer & { namesUnknown: boolean }> {
  constructor(catalogue: Catalogue, time: RateTime, entries: readonly NavasanEntry[] = readNavasanFile()) {
    super(catalogue, time, entries, (entry) => entry.item, BOUNDS);
  }

  /** `items`: the `item` parameter as given (comma-separated names, any case), or undefined for every allowed item. */
  prepare(snapshot: Snapshot, items: string | undefined, allowance: ReadonlySet<string> | null): PeerAnswer {
    const key = items ?? ALL_ITEMS;
    const forAllowance = allowance ?? EVERY_REFERENCE;
    const kept = this.cache.find(snapshot, forAllowance, key);
    if (kept !== undefined) return kept;
    const names = items === undefined ? ALL_ITEMS : normalItems(items);
    return this.cache.get(
      snapshot,
      forAllowance,
      names,
      () => this.render(snapshot, names, allowance),
      // Any string is an unknown item: answers naming one are not kept.
      (answer) => !answer.namesUnknown,
    );
  }

  private render(snapshot: Snapshot, names: string, allowance: ReadonlySet<string> | null): PeerAnswer & { namesUnknown: boolean } {
    const left = noneLeftOut();
    let body = '';
    const asked = names === ALL_ITEMS ? null : names.split(',');
    for (const name of asked ?? this.map.entries.map((mapped) => mapped.name)) {
      const mapped = this.map.byName.get(name);
      if (mapped === undefined) {
        left.unknown.push(name);
        continue;
      }
      if (allowance !== null && !allowance.has(mapped.reference.key)) {
        // Without `item`, the items outside the plan are simply not in it.
        if (asked !== null) left.denied.push(name);
        continue;
      }
      const prepared = snapshot.rates.get(mapped.reference.key);
      if (prepared === undefined || prepared.rate.value === null || prepared.rate.updated_at === null) {
        left.unavailable.push(name);
        continue;
      }
      if (prepared.rate.status === 'stale') left.stale.push(name);
      body += (body === '' ? '' : ',') + this.entry(prepared, mapped);
    }
    const whole = `{${body}}`;
    const headers = leftOutHeaders(left);
    return { body: new FixedBody(Buffer.from(whole)), etag: etagOf('nv', fnv1a(headers.join('\n'), fnv1a(whole))), headers, namesUnknown: left.unknown.length > 0 };
  }

  /** `"<item>":{…}` for a rate. */
  protected write(rate: Rate, mapped: Mapped<NavasanEntry>): string {
    const at = rate.updated_at!;
    return (
      `${JSON.stringify(mapped.name)}:{"value":"${mapped.unit.of(rate.value!)}","change":${rate.change === null ? 'null' : mapped.unit.of(rate.change)}` +
      `,"timestamp":${unixSeconds(at)},"date":"${navasanDateTime(this.time, at)}"}`
    );
  }
}

/** The item list as the answer reads it: names trimmed, lower-cased, each once, in request order, empty ones dropped. */
export function normalItems(items: string): string {
  const seen = new Set<string>();
  for (const raw of items.split(',')) {
    const name = raw.trim().toLowerCase();
    if (name !== '') seen.add(name);
  }
  return [...seen].join(',');
}
