import { createRequire } from 'node:module';
import type Holidays from 'date-holidays';
import { normaliseReason, type ClosureReason } from '../domain/market-calendar.js';

/**
 * The holiday library, loaded on first need: with its data for every country it is some 2 MB of code,
 * which a process that never looks up a holiday (an admin command, a server with no calendar) should
 * not parse.
 */
const library = () => createRequire(import.meta.url)('date-holidays') as typeof Holidays;

/** Years of holidays kept per country (the calendars ask for a few years around now). */
const MAX_CACHED_YEARS = 32;

/** Whether the holiday library knows a country (an ISO 3166-1 code, e.g. `IR`). */
export function knownHolidayCountry(country: string): boolean {
  const Library = library();
  return Object.hasOwn(new Library().getCountries('en'), country);
}

/**
 * Official holidays from the maintained `date-holidays` library, by local
 * date (YYYY-MM-DD in the country's zone): its public holidays only, the
 * English and Persian names side by side, several on one day joined. The
 * library writes some Persian names in Arabic presentation forms; they are
 * folded to ordinary letters (NFKC) here, before anything serves them. Lunar
 * holidays (Tasua, Ashura, the Eids) are computed by the library: the
 * official dates are announced each year and may differ by a day, which is
 * what operators confirm with `nerkh calendar close|open`.
 */
export function holidaysOf(country: string): (year: number) => ReadonlyMap<string, ClosureReason> {
  let readers: { english: Holidays; persian: Holidays } | null = null;
  const years = new Map<number, ReadonlyMap<string, ClosureReason>>();
  return (year: number) => {
    let days = years.get(year);
    if (days) return days;
    if (readers === null) {
      const Library = library();
      readers = { english: new Library(country, { languages: ['en'] }), persian: new Library(country, { languages: ['fa'] }) };
    }
    const names = new Map<string, { en: string[]; fa: string[] }>();
    const add = (list: ReturnType<Holidays['getHolidays']>, lang: 'en' | 'fa') => {
      for (const holiday of list) {
        if (holiday.type !== 'public') continue;
        const date = holiday.date.slice(0, 10);
        let entry = names.get(date);
        if (!entry) names.set(date, (entry = { en: [], fa: [] }));
        const name = normaliseReason(holiday.name);
        if (!entry[lang].includes(name)) entry[lang].push(name);
      }
    };
    add(readers.english.getHolidays(year, 'en'), 'en');
    add(readers.persian.getHolidays(year, 'fa'), 'fa');
    const built = new Map<string, ClosureReason>();
    for (const [date, { en, fa }] of names) built.set(date, Object.freeze({ en: en.join('; ') || fa.join('؛ '), fa: fa.join('؛ ') || en.join('; ') }));
    if (years.size >= MAX_CACHED_YEARS) years.clear();
    years.set(year, (days = built));
    return days;
  };
}
