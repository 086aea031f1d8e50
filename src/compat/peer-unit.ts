import Big from 'big.js';

/** A divisor a mapping may use: a power of ten (1, 10, 10000, …), so dividing by it is exact. */
export const DIVISOR_PATTERN = /^10{0,18}$/;

/**
 * A value in a peer's unit: the catalogue's number text divided by a power of
 * ten, exactly (multiplied by 10^-n, which big.js does without rounding) and
 * written plainly with no trailing zeros: rial `1234565` ÷ 10 → `123456.5`,
 * `12345678912` ÷ 10,000 → `1234567.8912`. Never a float, whatever its size.
 */
export class PeerUnit {
  private readonly factor: Big;

  constructor(readonly divisor: string) {
    if (!DIVISOR_PATTERN.test(divisor)) throw new RangeError(`a divisor must be a power of ten: ${divisor}`);
    this.factor = new Big(`1e-${divisor.length - 1}`);
  }

  of(raw: string): string {
    return this.divisor === '1' ? new Big(raw).toFixed() : new Big(raw).times(this.factor).toFixed();
  }
}
