const DAY_MS = 86_400_000;

const persian = new Intl.DateTimeFormat('en-u-ca-persian-nu-latn', { timeZone: 'UTC', year: 'numeric', month: 'numeric', day: 'numeric' });

/** The Solar Hijri (Jalali) date of a UTC calendar day, as Intl's persian calendar reads it. */
function jalaliOf(utcMidnight: number): [number, number, number] {
  const parts = persian.formatToParts(utcMidnight);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return [get('year'), get('month'), get('day')];
}

/**
 * The Gregorian date of a Jalali date, or null when the calendar has no such
 * day (month 13, Esfand 30 of a common year). The conversion is Intl's own
 * persian calendar, read backwards: the year starts at Nowruz, within two days
 * of 20 March of year + 621, so the day is found among a week of candidates
 * around that estimate and checked by formatting it.
 */
export function gregorianOfJalali(year: number, month: number, day: number): [number, number, number] | null {
  if (!Number.isInteger(year) || !Number.isInteger(month) || !Number.isInteger(day)) return null;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > (month <= 6 ? 31 : 30)) return null;
  const dayOfYear = (month <= 6 ? (month - 1) * 31 : 186 + (month - 7) * 30) + day - 1;
  const estimate = Date.UTC(year + 621, 2, 20) + dayOfYear * DAY_MS;
  for (const shift of [0, 1, -1, 2, -2, 3, -3]) {
    const candidate = estimate + shift * DAY_MS;
    const [y, m, d] = jalaliOf(candidate);
    if (y === year && m === month && d === day) {
      const date = new Date(candidate);
      return [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    }
  }
  return null;
}
