import Big from 'big.js';

/**
 * Conversion between two things priced in one currency (docs/api.md#convert):
 * `amount × from ÷ to`, where each side is its price in that currency. The
 * product is exact (big.js multiplies without rounding); only the quotient
 * may not terminate.
 */

/** Decimals of a quotient that does not terminate, rounded half-even. */
export const CONVERT_DECIMALS = 6;

/**
 * Wide enough for any terminating quotient of the inputs the endpoint takes:
 * a divisor of d digits reduced to 2^x·5^y needs at most max(x, y) ≤ 3.33·d
 * decimals, and amounts and prices stay far below 60 significant digits.
 */
const WIDE_DECIMALS = 200;

// big.js gives each constructor its own precision and rounding mode, so these never touch Big.DP elsewhere.
const Wide = Big();
Wide.DP = WIDE_DECIMALS;
const Rounded = Big();
Rounded.DP = CONVERT_DECIMALS;
Rounded.RM = Big.roundHalfEven;

/**
 * `amount × fromPrice ÷ toPrice` as plain number text: exact when the
 * quotient terminates, else rounded half-even to CONVERT_DECIMALS places.
 * `toPrice` must be above zero.
 */
export function convertAmount(amount: string, fromPrice: string, toPrice: string): string {
  const numerator = new Big(amount).times(fromPrice);
  const exact = new Wide(numerator).div(toPrice);
  // A terminating quotient fits WIDE_DECIMALS, so it is exact when multiplying back gives the numerator.
  if (exact.times(toPrice).eq(numerator)) return exact.toFixed();
  return new Rounded(numerator).div(toPrice).toFixed();
}
