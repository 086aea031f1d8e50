import Big from 'big.js';
import type { DropReason } from '../drops.js';

/**
 * Prices as people write them, read exactly: a JSON number's own digits, or
 * a string with grouping separators (`1,125,050,000`, `1٬125٬050٬000`),
 * Persian `۰-۹` or Arabic-Indic `٠-٩` digits and the Persian decimal
 * separator `٫`. The result is plain decimal text in ASCII digits; no value
 * ever passes through a float. Anything that could be read two ways is
 * dropped with its reason rather than guessed at.
 */
export type PriceReading = { text: string } | { drop: DropReason };

/** Longer text is no price (and big.js is never handed a megabyte of digits). */
const MAX_CHARS = 64;
/** An exponent further out than this is no price either (and `1e999999` would expand to a million digits). */
const MAX_EXPONENT = 40;

const GROUPING = new Set([',', '\u066c']); // comma, ARABIC THOUSANDS SEPARATOR ٬
const DECIMAL = new Set(['.', '\u066b']); // full stop, ARABIC DECIMAL SEPARATOR ٫
/** Marks that Persian and Arabic text carries around numbers and that mean nothing: bidi controls, ZWNJ/ZWJ. */
const INVISIBLE = /[\u200c-\u200f\u061c\u202a-\u202e\u2066-\u2069\ufeff]/g;
const MINUS = new Set(['-', '\u2212']);

type DigitSystem = 'ascii' | 'persian' | 'arabic';

function digitOf(code: number): { system: DigitSystem; digit: number } | null {
  if (code >= 0x30 && code <= 0x39) return { system: 'ascii', digit: code - 0x30 };
  if (code >= 0x6f0 && code <= 0x6f9) return { system: 'persian', digit: code - 0x6f0 };
  if (code >= 0x660 && code <= 0x669) return { system: 'arabic', digit: code - 0x660 };
  return null;
}

/**
 * A price written as a string. The rules, so that nothing is read two ways:
 * - one digit system per value (`۱۲3` is dropped as `mixed_digits`);
 * - `,` and `٬` only group thousands: the first group has one to three
 *   digits and every later one exactly three (`1,5` and `1,2,3` are dropped
 *   as `bad_grouping`: a decimal comma is never guessed at);
 * - one decimal separator at most, `.` or `٫`, with digits on both sides
 *   (`12.3.4` is `not_a_number`);
 * - a leading `-` is a negative price, dropped as `not_positive`, as is zero;
 * - spaces around the value and invisible direction marks are ignored.
 * Trailing zeros are kept (`71.250` stays `71.250`); leading ones are not.
 */
export function readPriceText(input: string): PriceReading {
  let text = input.replace(INVISIBLE, '').trim();
  if (text.length === 0 || text.length > MAX_CHARS) return { drop: 'not_a_number' };
  let negative = false;
  if (MINUS.has(text[0]!)) [negative, text] = [true, text.slice(1)];
  else if (text[0] === '+') text = text.slice(1);

  let system: DigitSystem | null = null;
  let grouping: string | null = null;
  let mixed = false;
  const integer: string[] = [];
  const groups: number[] = [];
  let groupLength = 0;
  let fraction: string[] | null = null;
  for (const char of text) {
    const digit = digitOf(char.charCodeAt(0));
    if (digit !== null) {
      if (system !== null && digit.system !== system) mixed = true;
      system = digit.system;
      if (fraction !== null) fraction.push(String(digit.digit));
      else {
        integer.push(String(digit.digit));
        groupLength++;
      }
    } else if (GROUPING.has(char)) {
      if (fraction !== null || (grouping !== null && grouping !== char)) return { drop: 'bad_grouping' };
      grouping = char;
      groups.push(groupLength);
      groupLength = 0;
    } else if (DECIMAL.has(char)) {
      if (fraction !== null) return { drop: 'not_a_number' };
      fraction = [];
    } else return { drop: 'not_a_number' };
  }
  if (integer.length === 0 || (fraction !== null && fraction.length === 0)) return { drop: 'not_a_number' };
  if (mixed) return { drop: 'mixed_digits' };
  if (grouping !== null) {
    groups.push(groupLength);
    if (groups[0]! < 1 || groups[0]! > 3 || groups.slice(1).some((length) => length !== 3)) return { drop: 'bad_grouping' };
  }
  const digits = stripLeadingZeros(integer.join(''));
  const plain = fraction === null ? digits : `${digits}.${fraction.join('')}`;
  return positive(plain, negative);
}

/**
 * A JSON number's own text (as lossless-json keeps it): kept as written when
 * plain, written out in full when it has an exponent (`1.5e3` → `1500`).
 */
export function readJsonNumber(raw: string): PriceReading {
  if (raw.length > MAX_CHARS) return { drop: 'not_a_number' };
  const negative = raw.startsWith('-');
  const magnitude = negative ? raw.slice(1) : raw;
  if (/^\d+(\.\d+)?$/.test(magnitude)) return positive(magnitude, negative);
  const match = /^(\d+(?:\.\d+)?)[eE]([+-]?\d+)$/.exec(magnitude);
  if (!match || Math.abs(Number(match[2])) > MAX_EXPONENT) return { drop: 'not_a_number' };
  return positive(new Big(magnitude).toFixed(), negative);
}

/** `value × scale`, exactly, in plain notation (`"10"` turns toman into rial). */
export function scalePrice(text: string, scale: string | null): string {
  return scale === null ? text : new Big(text).times(scale).toFixed();
}

function positive(plain: string, negative: boolean): PriceReading {
  if (negative || /^0+(\.0+)?$/.test(plain)) return { drop: 'not_positive' };
  return { text: plain };
}

function stripLeadingZeros(digits: string): string {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48) i++;
  return i === 0 ? digits : digits.slice(i);
}
