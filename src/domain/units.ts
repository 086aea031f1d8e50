import { Decimal } from 'decimal.js';
import type { Rate } from './rate.js';

/** How prices in rial are shown (PRODUCT §7): as given, or in toman (÷ 10). */
export const RATE_UNITS = ['rial', 'toman'] as const;
export type RateUnit = (typeof RATE_UNITS)[number];
export const DEFAULT_RATE_UNIT: RateUnit = 'rial';

export const RIAL_CURRENCY = 'IRR';
/** Not ISO 4217: the market's code for the toman, ten rials. */
export const TOMAN_CURRENCY = 'IRT';
const RIAL_WORD = 'ریال';
const TOMAN_WORD = 'تومان';

/**
 * Enough significant digits for any number text a source can send: division
 * by ten is then exact (decimal.js stops at the last non-zero digit), never
 * rounded. Its own copy, so no other user of decimal.js changes it.
 */
const Exact = Decimal.clone({ precision: 1_000 });

/** A rial amount's number text in toman, exactly: `1103120725` → `110312072.5`, `0.3` → `0.03`. */
export function rialToToman(raw: string): string {
  return new Exact(raw).div(10).toFixed();
}

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

/** The fields of a rate that are amounts in its currency (number text): what a toman rendering divides. */
const PRICE_FIELDS = ['value'] as const satisfies readonly (keyof Rate)[];
