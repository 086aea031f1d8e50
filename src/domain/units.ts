import Big from 'big.js';
import type { Rate } from './rate.js';

/** How prices in rial are shown (docs/api.md#units-and-precision): as given, or in toman (÷ 10). */
export const RATE_UNITS = ['rial', 'toman'] as const;
export type RateUnit = (typeof RATE_UNITS)[number];
export const DEFAULT_RATE_UNIT: RateUnit = 'rial';

export const RIAL_CURRENCY = 'IRR';
/** Not ISO 4217: the market's code for the toman, ten rials. */
export const TOMAN_CURRENCY = 'IRT';
const RIAL_WORD = 'ریال';
const TOMAN_WORD = 'تومان';

/**
 * A rial amount's number text in toman, exactly: `1103120725` → `110312072.5`,
 * `0.3` → `0.03`. Multiplication by 0.1 is exact in big.js (only division
 * rounds), and `toFixed()` writes plain notation with no trailing zeros.
 */
export function rialToToman(raw: string): string {
  return new Big(raw).times(TENTH).toFixed();
}
const TENTH = new Big('0.1');

/** A rial label in toman: only the leading currency word changes (`ریال/گرم` → `تومان/گرم`). */
export function tomanLabel(unit: string): string {
  return unit.startsWith(RIAL_WORD) ? TOMAN_WORD + unit.slice(RIAL_WORD.length) : unit;
}

/**
 * A rate as shown in toman: a rial price divided by ten with its label and
 * currency to match; any other currency is returned unchanged (the same
 * object, so it serialises to the same bytes).
 */
export function inToman(rate: Rate): Rate {
  if (rate.currency !== RIAL_CURRENCY) return rate;
  const toman: Rate = { ...rate, unit: tomanLabel(rate.unit), currency: TOMAN_CURRENCY };
  for (const field of PRICE_FIELDS) {
    const raw = rate[field];
    if (raw !== null) toman[field] = rialToToman(raw);
  }
  return toman;
}

/**
 * The fields of a rate that are amounts in its currency (number text): what a
 * toman rendering divides. `change_percent` is a ratio and stays.
 */
const PRICE_FIELDS = ['value', 'day_open', 'day_high', 'day_low', 'prev_close', 'change'] as const satisfies readonly (keyof Rate)[];
