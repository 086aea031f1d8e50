import { LRUCache } from 'lru-cache';
import { etagOf, fnv1a } from '../../../domain/hash.js';
import type { ClosedDay } from '../../../domain/market-calendar.js';
import { okHead } from '../../../render/envelope.js';

/** Answers kept, by market, range and calendar revision: the same range is asked again and again (a month's view). */
const MAX_CACHED_ANSWERS = 256;

/**
 * `/v1/calendar` bodies (docs/api.md#calendar): one entry per closed day of
 * a market, Gregorian and Jalali dates in its zone, with the reason in
 * English and Persian. The tail after the head is kept per market, range
 * and revision of the operators' declarations; the head takes the time.
 */
export class CalendarRenderer {
  private readonly tails = new LRUCache<string, { tail: string; etag: string }>({ max: MAX_CACHED_ANSWERS });

  render(market: string, from: string, to: string, revision: number, closedDays: () => readonly ClosedDay[], generatedAt: string): { body: string; etag: string } {
    const id = `${revision}|${market}|${from}|${to}`;
    let cached = this.tails.get(id);
    if (!cached) {
      const closed = closedDays()
        .map((day) => `{"date":"${day.date}","date_jalali":"${day.dateJalali}","reason":${JSON.stringify(day.reason.en)},"reason_fa":${JSON.stringify(day.reason.fa)}}`)
        .join(',');
      const tail = `,"market":${JSON.stringify(market)},"from":"${from}","to":"${to}","closed":[${closed}]}`;
      cached = { tail, etag: etagOf('c', fnv1a(tail)) };
      this.tails.set(id, cached);
    }
    return { body: `${okHead(generatedAt)}${cached.tail}`, etag: cached.etag };
  }
}
