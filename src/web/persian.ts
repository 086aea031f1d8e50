import type { ZoneTime } from '../domain/time.js';

/** Persian presentation for the public pages: Jalali dates, Persian digits, ages in words. */

const PERSIAN_DIGITS = '۰۱۲۳۴۵۶۷۸۹';

export function persianDigits(text: string | number): string {
  return String(text).replace(/[0-9]/g, (d) => PERSIAN_DIGITS[Number(d)]!);
}

/** "۱۴۰۵/۰۹/۰۱ ۱۴:۰۵:۰۹": the Jalali date and time of day in the service's zone. */
export function jalaliDateTime(ms: number, time: ZoneTime): string {
  return persianDigits(`${time.jalaliDate(ms)} ${time.format(ms).slice(11, 19)}`);
}

/** "۵ دقیقه پیش": the same steps as the English `formatAge`. */
export function persianAge(seconds: number): string {
  if (seconds < 0) return 'همین حالا';
  if (seconds < 60) return `${persianDigits(seconds)} ثانیه پیش`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${persianDigits(minutes)} دقیقه پیش`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${persianDigits(hours)} ساعت پیش`;
  return `${persianDigits(Math.floor(hours / 24))} روز پیش`;
}
