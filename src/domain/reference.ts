export const CATEGORIES = ['gold', 'coin', 'currency', 'precious_metal', 'industrial_metal', 'energy', 'crypto'] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * What one price buys: the one vocabulary of `per` (data/catalogue/README.md).
 * `unit` and its multiples count whatever the reference names (a currency, a
 * token); `point` is an index level, which buys nothing.
 */
export const PER_UNITS = [
  'unit',
  '10 units',
  '100 units',
  '1000 units',
  '1000000 units',
  'coin',
  'gram',
  'mithqal',
  'ounce',
  'kilogram',
  'pound',
  'tonne',
  'barrel',
  'gallon',
  'litre',
  'MMBtu',
  'MWh',
  'therm',
  '100 therms',
  'point',
] as const;
export type PerUnit = (typeof PER_UNITS)[number];

/** An ISO 4217 code: the price's currency (`XXX` for an index, which has none). */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/** The pattern every reference key and alias follows (docs/api.md#errors, INVALID_KEYS). */
export const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** One entry of the catalogue: what a number means, never the number itself. */
export interface Reference {
  key: string;
  title: string;
  title_en: string;
  description: string;
  /** The Persian label: currency and `per` in words, e.g. ریال/گرم. */
  unit: string;
  currency: string;
  per: PerUnit;
  /**
   * A generous band of plausible values (inclusive), in the reference's own
   * currency and per: a value outside it (a gold coin at 0.3 rial, 1e300) is a
   * broken source, not a market move, and is never served. Null when the
   * catalogue gives none. Internal: never in a response.
   */
  min: number | null;
  max: number | null;
  category: Category;
  source_key: string;
  aliases: string[];
  status: 'active';
}
