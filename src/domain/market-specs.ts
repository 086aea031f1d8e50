import type { AnnualClosure, ClosureReason, MarketRules, WeekTime, WeeklyClosure } from './market-calendar.js';
import { normaliseReason } from './market-calendar.js';
import type { Reference } from './reference.js';

/** The market names the service knows without any config. */
export const DEFAULT_MARKETS = ['tehran', 'international', 'crypto'] as const;

/** A market as the config describes it (docs/configuration.md#markets), defaults filled in. */
export interface MarketSpec {
  readonly name: string;
  readonly timezone: string;
  readonly weekly: readonly { from: string; to: string; reason: string; reason_fa?: string }[];
  readonly annual: readonly { date: string; reason: string; reason_fa?: string }[];
  /** A country of the holiday library (`IR`) whose public holidays close the market; null: none. */
  readonly holidays: string | null;
  /** Which references trade here: by key or alias, by category, by currency; `default` takes every reference no market claims. */
  readonly references: readonly string[];
  readonly categories: readonly string[];
  readonly currencies: readonly string[];
  readonly default: boolean;
}

/** The built-in markets: Tehran's bazaar, the international markets, crypto (docs/configuration.md#markets). */
export const DEFAULT_MARKET_SPECS: readonly MarketSpec[] = [
  {
    name: 'tehran',
    timezone: 'Asia/Tehran',
    weekly: [{ from: 'friday 00:00', to: 'saturday 00:00', reason: 'Friday', reason_fa: 'جمعه' }],
    annual: [],
    holidays: 'IR',
    references: [],
    categories: [],
    currencies: ['IRR'],
    default: false,
  },
  {
    name: 'international',
    timezone: 'UTC',
    weekly: [{ from: 'friday 22:00', to: 'sunday 22:00', reason: 'Weekend', reason_fa: 'تعطیلی آخر هفته' }],
    annual: [
      { date: '12-25', reason: 'Christmas Day', reason_fa: 'کریسمس' },
      { date: '01-01', reason: "New Year's Day", reason_fa: 'آغاز سال میلادی' },
    ],
    holidays: null,
    references: [],
    categories: [],
    currencies: [],
    default: true,
  },
  { name: 'crypto', timezone: 'UTC', weekly: [], annual: [], holidays: null, references: [], categories: ['crypto'], currencies: [], default: false },
];

/** The same markets keeping no calendar of their own: no weekly, annual or holiday closures (NERKH_MARKET_CALENDAR=off); operators' declarations still apply. */
export function withoutClosures(specs: readonly MarketSpec[]): MarketSpec[] {
  return specs.map((spec) => ({ ...spec, weekly: [], annual: [], holidays: null }));
}

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEK_TIME = /^([a-z]+)\s+(\d{1,2}):(\d{2})$/;
const MONTH_DAY = /^(\d{2})-(\d{2})$/;

/** `friday 22:00` (a weekday in English, full or its first three letters, and a 24-hour time; `24:00` ends a day) → the weekday and minute; null when unreadable. */
export function parseWeekTime(text: string): WeekTime | null {
  const match = WEEK_TIME.exec(text.trim().toLowerCase());
  if (!match) return null;
  const day = DAYS.findIndex((name) => name === match[1] || name.slice(0, 3) === match[1]);
  const [hour, minute] = [Number(match[2]), Number(match[3])];
  if (day < 0 || minute > 59 || hour > 24 || (hour === 24 && minute > 0)) return null;
  return { day, minute: hour * 60 + minute };
}

/** `12-25` → month and day; null when it is no day of a year (29 February is one). */
export function parseMonthDay(text: string): { month: number; day: number } | null {
  const match = MONTH_DAY.exec(text);
  if (!match) return null;
  const [month, day] = [Number(match[1]), Number(match[2])];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(2024, month, 0)).getUTCDate()) return null;
  return { month, day };
}

function reason(en: string, fa: string | undefined): ClosureReason {
  return Object.freeze({ en: normaliseReason(en), fa: normaliseReason(fa ?? en) });
}

const NO_HOLIDAYS: ReadonlyMap<string, ClosureReason> = new Map();

/** A market's rules from its spec; `holidaysOf` gives a country's holidays (catalogue/holidays.ts). Throws on an unreadable time or date. */
export function marketRules(spec: MarketSpec, holidaysOf: (country: string) => (year: number) => ReadonlyMap<string, ClosureReason>): MarketRules {
  const weekly: WeeklyClosure[] = spec.weekly.map((rule, i) => {
    const from = parseWeekTime(rule.from);
    const to = parseWeekTime(rule.to);
    if (!from) throw new RangeError(`weekly[${i}].from: "${rule.from}" is not a weekday and time such as "friday 22:00"`);
    if (!to) throw new RangeError(`weekly[${i}].to: "${rule.to}" is not a weekday and time such as "sunday 22:00"`);
    return { from, to, reason: reason(rule.reason, rule.reason_fa) };
  });
  const annual: AnnualClosure[] = spec.annual.map((rule, i) => {
    const date = parseMonthDay(rule.date);
    if (!date) throw new RangeError(`annual[${i}].date: "${rule.date}" is not a month and day such as "12-25"`);
    return { ...date, reason: reason(rule.reason, rule.reason_fa) };
  });
  const holidays = spec.holidays === null ? () => NO_HOLIDAYS : holidaysOf(spec.holidays);
  return { name: spec.name, timeZone: spec.timezone, weekly, annual, holidays };
}

/** The built-in markets' rules, by name (for tests and tools). */
export function defaultMarketRules(holidaysOf: (country: string) => (year: number) => ReadonlyMap<string, ClosureReason>): Record<(typeof DEFAULT_MARKETS)[number], MarketRules> {
  const [tehran, international, crypto] = DEFAULT_MARKET_SPECS.map((spec) => marketRules(spec, holidaysOf));
  return { tehran: tehran!, international: international!, crypto: crypto! };
}

/**
 * Which market a reference trades in: the market naming it (key or alias),
 * else the one naming its category, else its currency, else the default
 * market. Returns the market name, or null when no market takes it (a config
 * with no default market): such a reference is always open.
 */
export function marketOfReference(reference: Reference, specs: readonly MarketSpec[]): string | null {
  const names = [reference.key, ...reference.aliases];
  for (const spec of specs) if (spec.references.some((name) => names.includes(name))) return spec.name;
  for (const spec of specs) if (spec.categories.includes(reference.category)) return spec.name;
  for (const spec of specs) if (spec.currencies.includes(reference.currency)) return spec.name;
  return specs.find((spec) => spec.default)?.name ?? null;
}
