import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Big from 'big.js';
import { evaluateFormula, FormulaError, parseFormula } from '../../src/domain/formula.js';

const GOLD_18K = 'gold_ounce * usd_free / 31.1034768 * 0.75';

/** The same formula by hand, as the docs describe it: big.js, division to 40 places, one rounding at the end, half to even. */
function byHand(goldOunce: string, usdFree: string, decimals: number): string {
  const Precise = Big();
  Precise.DP = 40;
  return new Precise(goldOunce).times(usdFree).div('31.1034768').times('0.75').round(decimals, Big.roundHalfEven).toFixed();
}

const evaluate = (text: string, values: Record<string, string>, decimals = 6) => evaluateFormula(parseFormula(text), (name) => values[name]!, decimals);

describe('parseFormula', () => {
  it('reads + - * /, parentheses, decimal constants and names, each name once in order', () => {
    const formula = parseFormula('(usd_free + eur_free) / 2 - usd_free * 0.5');
    assert.deepEqual(formula.names, ['usd_free', 'eur_free']);
    assert.equal(parseFormula(GOLD_18K).text, GOLD_18K);
  });

  it('refuses anything else, saying what', () => {
    const refusals: [string, RegExp][] = [
      ['gold_ounce ** 2', /"\*\*" is not/],
      ['gold_ounce % 2', /"%" is not/],
      ['max(gold_ounce, 1)', /functions are not/],
      ['gold_ounce usd_free', /an operator is missing/],
      ['1e5 * gold_ounce', /1e5 is not a decimal constant/],
      ['.5 * gold_ounce', /\.5 is not a decimal constant/],
      ['gold.ounce', /name with "\." or "\[…\]"/],
      ['"1" + gold_ounce', /is not a decimal constant/],
      ['true', /true is not a decimal constant/],
      ['!gold_ounce', /"!" is not/],
      ['a ? b : c', /a conditional is not/],
      ['gold_ounce *', /Expected expression after \*/],
      ['(gold_ounce', /Unclosed \(/],
      ['   ', /the formula is empty/],
    ];
    for (const [text, pattern] of refusals) assert.throws(() => parseFormula(text), (error: unknown) => error instanceof FormulaError && pattern.test(error.message), text);
  });
});

describe('evaluateFormula', () => {
  it('is exact and rounds once, half to even, to the digits asked for', () => {
    assert.equal(evaluate('a + b', { a: '0.1', b: '0.2' }), '0.3');
    assert.equal(evaluate('a / 3', { a: '2' }), '0.666667');
    assert.equal(evaluate('a / 3 * 3', { a: '2' }), '2');
    // Ties go to the even neighbour; anything past a tie goes up.
    assert.equal(evaluate('a / 4', { a: '10' }, 0), '2');
    assert.equal(evaluate('a / 4', { a: '14' }, 0), '4');
    assert.equal(evaluate('a / 4', { a: '10.0000000000000000000000000000000000000000000001' }, 0), '3');
    assert.equal(evaluate('a * 0.0000005', { a: '1' }), '0');
    assert.equal(evaluate('a * 0.0000015', { a: '1' }), '0.000002');
    assert.equal(evaluate('-a / 4', { a: '10' }, 0), '-2');
    // Integers past 2^53 keep every digit.
    assert.equal(evaluate('a + 1', { a: '9007199254740993' }, 0), '9007199254740994');
    assert.equal(evaluate('a * b - b', { a: '1.5', b: '2.25' }), '1.125');
  });

  it('matches the formula worked by hand with big.js, digit for digit, on many inputs', () => {
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 500; i++) {
      const goldOunce = (1000 + random() * 4000).toFixed(1 + Math.floor(random() * 9));
      const usdFree = (500_000 + random() * 1_500_000).toFixed(Math.floor(random() * 6));
      assert.equal(evaluate(GOLD_18K, { gold_ounce: goldOunce, usd_free: usdFree }, 0), byHand(goldOunce, usdFree, 0), `${goldOunce} ${usdFree}`);
      assert.equal(evaluate(GOLD_18K, { gold_ounce: goldOunce, usd_free: usdFree }, 6), byHand(goldOunce, usdFree, 6), `${goldOunce} ${usdFree}`);
    }
  });

  it('rounds an exact half to even where rounding the division first would not', () => {
    // gold_ounce × usd_free = 31.1034768 × 1646090520166, so the value is exactly 1234567890124.5: a tie, to the even 1234567890124.
    const goldOunce = '31.1034768';
    const usdFree = '1646090520166';
    assert.equal(evaluate(GOLD_18K, { gold_ounce: goldOunce, usd_free: usdFree }, 0), '1234567890124');
    assert.equal(byHand(goldOunce, usdFree, 0), '1234567890124');
    // One more rial on the product and it is no tie: up.
    assert.equal(evaluate('a * 0.75', { a: '1646090520167' }, 0), '1234567890125');
  });

  it('refuses a division by zero', () => {
    assert.throws(() => evaluate('a / (b - b)', { a: '1', b: '2' }), (error: unknown) => error instanceof FormulaError && /division by zero/.test(error.message));
  });

  it('refuses, when read, a divisor that reads no reference and is zero; a divisor that reads one is left to the values', () => {
    const refusals: [string, string][] = [
      ['a / 0', 'divides by zero'],
      ['a / 0.000', 'divides by zero'],
      ['a / -0', 'divides by zero: -0 is 0'],
      ['a / (2 - 2)', 'divides by zero: (2 - 2) is 0'],
      ['a * (1 + b / (0.5 * 2 - 1))', 'divides by zero: ((0.5 * 2) - 1) is 0'],
    ];
    for (const [text, message] of refusals) assert.throws(() => parseFormula(text), (error: unknown) => error instanceof FormulaError && error.message === message, text);
    for (const text of ['a / (b - b)', 'a / (2 - 1)', '0 / a', 'a / 0.5']) assert.doesNotThrow(() => parseFormula(text), text);
  });
});
