import type { RateTime } from '../domain/rate.js';

/** navasan's `date`: the Jalali date and Tehran time of the update, `1405-09-07 16:29:03`. */
export function navasanDateTime(time: RateTime, ms: number): string {
  return time.jalaliDateTime(ms).replaceAll('/', '-');
}

/** navasan's candle `date`: the Jalali date of the candle's day, `1405-09-07`. */
export function navasanDate(time: RateTime, ms: number): string {
  return time.jalaliDate(ms).replaceAll('/', '-');
}

/** BrsApi's `time`: hours and minutes in the zone, `16:29`. */
export function brsapiTime(time: RateTime, ms: number): string {
  return time.format(ms).slice(11, 16);
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
