import Big from 'big.js';

/**
 * Decimal arithmetic on the number text sources give, through big.js: no
 * value ever passes through a float, so 0.1 + 0.2 is 0.3 and
 * 123456789012345678 stays itself. Addition, subtraction and comparison are
 * exact; only division rounds, to `Big.DP` places.
 */

/** A plain decimal or a JSON number (what a source value or an imported cell may be). */
const DECIMAL_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

export function isDecimalText(text: string): boolean {
  return DECIMAL_TEXT.test(text);
}

/** Plain decimal text, no exponent: what nearly every source writes. */
const PLAIN = /^-?\d+(?:\.\d+)?$/;

/**
 * -1, 0 or 1 as a is below, equal to or above b. Plain decimals are compared
 * on their digits, without building decimal objects: candle rollups compare
 * thousands of values per history request, and big.js allocates for each.
 * Anything else (an exponent) goes through big.js.
 */
export function compareDecimal(a: string, b: string): number {
  if (a === b) return 0;
  if (!PLAIN.test(a) || !PLAIN.test(b)) return new Big(a).cmp(b);
  const negativeA = a.charCodeAt(0) === 45;
  const negativeB = b.charCodeAt(0) === 45;
  if (negativeA !== negativeB) return isZero(a) && isZero(b) ? 0 : negativeA ? -1 : 1;
  const magnitude = compareMagnitude(negativeA ? a.slice(1) : a, negativeB ? b.slice(1) : b);
  return negativeA ? -magnitude : magnitude;
}

/** Two non-negative plain decimals: the longer integer part is larger, then digit by digit. */
function compareMagnitude(a: string, b: string): number {
  const dotA = a.indexOf('.');
  const dotB = b.indexOf('.');
  const intA = stripZeros(dotA === -1 ? a : a.slice(0, dotA));
  const intB = stripZeros(dotB === -1 ? b : b.slice(0, dotB));
  if (intA.length !== intB.length) return intA.length < intB.length ? -1 : 1;
  if (intA !== intB) return intA < intB ? -1 : 1;
  const fracA = dotA === -1 ? '' : a.slice(dotA + 1);
  const fracB = dotB === -1 ? '' : b.slice(dotB + 1);
  const length = Math.max(fracA.length, fracB.length);
  for (let i = 0; i < length; i++) {
    const digitA = i < fracA.length ? fracA.charCodeAt(i) : 48;
    const digitB = i < fracB.length ? fracB.charCodeAt(i) : 48;
    if (digitA !== digitB) return digitA < digitB ? -1 : 1;
  }
  return 0;
}

function stripZeros(digits: string): string {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48) i++;
  return i === 0 ? digits : digits.slice(i);
}

function isZero(text: string): boolean {
  return /^-?0+(?:\.0+)?$/.test(text);
}

/** a − b, exactly, in plain notation (never an exponent). */
export function subtractDecimal(a: string, b: string): string {
  return new Big(a).minus(b).toFixed();
}

/** change ÷ base × 100, to two decimals (half up), in plain notation; `-0.00` is written `0.00`. */
export function percentOf(change: string, base: string): string {
  const ratio = new Big(change).times(100).div(base).round(2, Big.roundHalfUp);
  return ratio.eq(0) ? '0.00' : ratio.toFixed(2);
}

/** True when the text is a decimal above zero (what may be served or imported as a price). */
export function isPositiveDecimal(text: string): boolean {
  return isDecimalText(text) && new Big(text).gt(0);
}


/** A decimal's normal plain form: no leading or trailing zeros that say nothing (`007.50` → `7.5`, `0.0` → `0`). */
export function normalDecimal(text: string): string {
  return new Big(text).toFixed();
}
