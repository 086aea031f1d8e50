import { asciiDigits } from '../../domain/digits.js';
import { gregorianOfJalali } from '../../domain/jalali.js';
import { isCalendarDate, parseIsoDateTime, type ZoneTime } from '../../domain/time.js';

/**
 * Below this a unix time is seconds, at or above it milliseconds:
 * 100,000,000,000 seconds is the year 5138 and as many milliseconds is
 * March 1973, so no current time can be read both ways.
 */
export const UNIX_MS_FROM = 100_000_000_000;
/** Milliseconds past this (the year 2286) are no time a document means (microseconds, say): unreadable. */
const UNIX_MS_BELOW = 10_000_000_000_000;
/** A date whose year is below this is a Solar Hijri (Jalali) date: 1405 is this decade there, and no price of 1405 AD is quoted. */
const JALALI_BELOW = 1700;

const UNIX = /^\d+(?:\.\d+)?$/;
/** `1405/09/03 22:00:00`, `2026-11-24 22:00`, `1405/9/3`: a date, then optionally a time, in the configured zone. */
const LOCAL = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:(?:[ T]|, ?)(\d{1,2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?)?$/;

/**
 * A time as documents write it, as epoch ms, or null when it cannot be read:
 * - unix seconds or milliseconds, as a number or digits (told apart by
 *   magnitude, see UNIX_MS_FROM); fractions of a second are kept;
 * - ISO 8601 with `Z` or an offset;
 * - a date and time without a zone (`2026-11-24 22:00:00`, ISO without an
 *   offset), in the configured zone;
 * - a Jalali date and time (`1405/09/03 22:00:00`, year below 1700) in the
 *   configured zone.
 * Persian and Arabic-Indic digits are read as their ASCII twins.
 */
export function readTime(value: string, zone: ZoneTime): number | null {
  const text = asciiDigits(value.trim());
  if (UNIX.test(text)) return unixTime(Number(text));
  const zoned = parseIsoDateTime(text.replace(' ', 'T'), true);
  // A Jalali date written with a zone is no ISO time: refused rather than read as the year 1405 AD.
  if (zoned) return Number(text.slice(0, 4)) < JALALI_BELOW ? null : zoned.ms;
  const match = LOCAL.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part))) as [number, number, number, number, number, number];
  const millis = match[7] === undefined ? 0 : Math.round(Number(match[7]) * 1000);
  if (hour > 23 || minute > 59 || second > 59) return null;
  if (year < JALALI_BELOW) {
    const gregorian = gregorianOfJalali(year, month, day);
    return gregorian === null ? null : zone.localToEpoch(...gregorian, hour, minute, second, millis);
  }
  return isCalendarDate(year, month, day) ? zone.localToEpoch(year, month, day, hour, minute, second, millis) : null;
}

/** A unix time, seconds or milliseconds by magnitude; null when it is none. */
export function unixTime(value: number): number | null {
  if (!Number.isFinite(value) || value <= 0) return null;
  const ms = value < UNIX_MS_FROM ? value * 1000 : value;
  return ms < UNIX_MS_BELOW ? Math.round(ms) : null;
}
