import { isoDate } from '../domain/market-calendar.js';
import { readTimeInput } from '../history/ranges/range-query.js';

/** The widest span one calendar request or declaration covers, in days. */
export const MAX_CALENDAR_SPAN_DAYS = 366;
const DAY_MS = 86_400_000;

/**
 * A calendar day as a caller wrote it: Gregorian `2026-11-20` or Jalali
 * `1405/08/29` (a year below 1700 is Jalali), in ASCII, Persian or
 * Arabic-Indic digits; the Gregorian YYYY-MM-DD, or the reason it is not one.
 */
export function readCalendarDay(text: string): string | { error: string } {
  const input = readTimeInput(text.trim());
  if ('error' in input) return { error: input.error };
  if ('instant' in input) return { error: `${JSON.stringify(text)} is a date-time; give a date (2026-11-20 or 1405/08/29)` };
  return isoDate(...input.day);
}

/** The days from `first` to `last` (YYYY-MM-DD, inclusive); empty when `last` is before `first`. */
export function daysFrom(first: string, last: string): string[] {
  const days: string[] = [];
  for (let day = Date.parse(`${first}T00:00:00Z`); day <= Date.parse(`${last}T00:00:00Z`); day += DAY_MS) days.push(new Date(day).toISOString().slice(0, 10));
  return days;
}

/** How many days from `first` to `last`, both counted. */
export function spanDays(first: string, last: string): number {
  return Math.round((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / DAY_MS) + 1;
}

/** The day `days` after `date` (YYYY-MM-DD). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
