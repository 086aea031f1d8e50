import type { Catalogue } from '../catalogue/catalogue.js';
import { etagOf, fnv1a } from '../domain/hash.js';
import type { Rate, RateTime } from '../domain/rate.js';
import type { Snapshot } from '../live/snapshot.js';
import { FixedBody } from '../render/fixed-body.js';
import { leftOutHeaders, noneLeftOut } from './left-out.js';
import type { PeerAnswer } from './peer-answer.js';
import { PeerEntries } from './peer-entries.js';
import { BRSAPI_GROUPS, readBrsapiFile, type BrsapiEntry, type Mapped } from './peers.js';
import { brsapiTime, unixSeconds } from './peer-time.js';

/** One answer per snapshot and allowance (about 15 KB); plans are few. */
const BOUNDS = { entries: 256, bytes: 8 * 1024 * 1024 };
const EVERY_REFERENCE = Symbol('every reference');

/**
 * BrsApi's `Gold_Currency.php`: `{"gold": […], "currency": […],
 * "cryptocurrency": […]}`, each item `{"date", "time", "time_unix", "symbol",
 * "name_en", "name", "price", "change_value", "change_percent", "unit"}`, the
 * prices JSON numbers written from the exact decimal text (toman or dollars).
 * Prepared once per snapshot and allowance; only the plan's references
 * appear (the others are named in x-nerkh-denied-items).
 */
export class BrsapiMarket extends PeerEntries<BrsapiEntry, PeerAnswer> {
  constructor(catalogue: Catalogue, time: RateTime, entries: readonly BrsapiEntry[] = readBrsapiFile()) {
    super(catalogue, time, entries, (entry) => entry.symbol, BOUNDS);
  }

  prepare(snapshot: Snapshot, allowance: ReadonlySet<string> | null): PeerAnswer {
    return this.cache.get(snapshot, allowance ?? EVERY_REFERENCE, '', () => this.render(snapshot, allowance));
  }

  private render(snapshot: Snapshot, allowance: ReadonlySet<string> | null): PeerAnswer {
    const left = noneLeftOut();
    const groups = new Map<string, string[]>(BRSAPI_GROUPS.map((group) => [group, []]));
    for (const mapped of this.map.entries) {
      if (allowance !== null && !allowance.has(mapped.reference.key)) {
        left.denied.push(mapped.name);
        continue;
      }
      const prepared = snapshot.rates.get(mapped.reference.key);
      if (prepared === undefined || prepared.rate.value === null || prepared.rate.updated_at === null) {
        left.unavailable.push(mapped.name);
        continue;
      }
      if (prepared.rate.status === 'stale') left.stale.push(mapped.name);
      groups.get(mapped.entry.group)!.push(this.entry(prepared, mapped));
    }
    const whole = `{${BRSAPI_GROUPS.map((group) => `"${group}":[${groups.get(group)!.join(',')}]`).join(',')}}`;
    const headers = leftOutHeaders(left);
    return { body: new FixedBody(Buffer.from(whole)), etag: etagOf('bm', fnv1a(headers.join('\n'), fnv1a(whole))), headers };
  }

  protected write(rate: Rate, mapped: Mapped<BrsapiEntry>): string {
    const at = rate.updated_at!;
    const { symbol, name_en, name, unit } = mapped.entry;
    return (
      `{"date":"${this.time.jalaliDate(at)}","time":"${brsapiTime(this.time, at)}","time_unix":${unixSeconds(at)}` +
      `,"symbol":${JSON.stringify(symbol)},"name_en":${JSON.stringify(name_en)},"name":${JSON.stringify(name)}` +
      `,"price":${mapped.unit.of(rate.value!)},"change_value":${rate.change === null ? 'null' : mapped.unit.of(rate.change)}` +
      `,"change_percent":${rate.change_percent ?? 'null'},"unit":${JSON.stringify(unit)}}`
    );
  }
}
