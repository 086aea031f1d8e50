/**
 * The arithmetic of /v1/convert and /v1/jewellery on its own: each expected
 * figure worked by hand (and checked with a decimal library), never computed
 * by the code under test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Big from 'big.js';
import { convertAmount } from '../../src/domain/convert.js';
import { jewelleryPrice } from '../../src/domain/jewellery.js';

describe('convertAmount', () => {
  it('is exact when the quotient terminates, however many decimals it takes', () => {
    assert.equal(convertAmount('3.5', '72345678', '10'), '25320987.3');
    assert.equal(convertAmount('1', '10', '1024'), '0.009765625');
    assert.equal(convertAmount('1', '1', '3125'), '0.00032');
    assert.equal(convertAmount('0.00000001', '1', '10'), '0.000000001');
    // Digits a double would lose.
    assert.equal(convertAmount('3.5', '72345678.123456789012', '10'), '25320987.3432098761542');
    assert.equal(convertAmount('123456789012345', '123456789', '1'), '15241578751714595060205');
  });

  it('rounds a quotient that does not terminate half-even to 6 decimals', () => {
    assert.equal(convertAmount('1', '1', '3'), '0.333333');
    assert.equal(convertAmount('2', '1', '3'), '0.666667');
    assert.equal(convertAmount('1', '1030000', '1120000'), '0.919643');
    assert.equal(convertAmount('1', '1120000', '1030000'), '1.087379');
    assert.equal(convertAmount('1', '4000.5', '128.6'), '31.108087');
    // 1 ÷ 7 = 0.142857142…: the seventh digit (1) rounds down.
    assert.equal(convertAmount('1', '1', '7'), '0.142857');
  });

  it('leaves the global big.js precision alone', () => {
    assert.equal(Big.DP, 20);
    assert.equal(Big.RM, Big.roundHalfUp);
  });
});

describe('jewelleryPrice', () => {
  it('keeps each line exact and rounds only the total, half up', () => {
    // gold 3.5 × 72,345,678; making 18 %; profit 7 % of gold + making; VAT 10 % of making + profit.
    assert.deepEqual(jewelleryPrice({ weight: '3.5', gramPrice: '72345678', makingPercent: '18', profitPercent: '7', vatPercent: '10' }), {
      gold: '253209873',
      making: '45577777.14',
      profit: '20915135.5098',
      vat: '6649291.26498',
      total: '326352077',
    });
  });

  it('in toman is computed on the toman gram price and rounded to a whole toman', () => {
    assert.deepEqual(jewelleryPrice({ weight: '3.5', gramPrice: '7234567.8', makingPercent: '18', profitPercent: '7', vatPercent: '10' }), {
      gold: '25320987.3',
      making: '4557777.714',
      profit: '2091513.55098',
      vat: '664929.126498',
      total: '32635208',
    });
  });

  it('rounds an exact half up, not to even', () => {
    assert.equal(jewelleryPrice({ weight: '1', gramPrice: '9646090.5', makingPercent: '0', profitPercent: '0', vatPercent: '0' }).total, '9646091');
    assert.equal(jewelleryPrice({ weight: '1', gramPrice: '9646089.5', makingPercent: '0', profitPercent: '0', vatPercent: '0' }).total, '9646090');
    assert.equal(jewelleryPrice({ weight: '1', gramPrice: '100.4999', makingPercent: '0', profitPercent: '0', vatPercent: '0' }).total, '100');
  });

  it('takes fractional percents exactly', () => {
    // gold 2 × 84,403,291; making 12.5 %; profit 5 %; VAT 9 %: 202,156,432.356375.
    assert.deepEqual(jewelleryPrice({ weight: '2', gramPrice: '84403291', makingPercent: '12.5', profitPercent: '5', vatPercent: '9' }), {
      gold: '168806582',
      making: '21100822.75',
      profit: '9495370.2375',
      vat: '2753657.368875',
      total: '202156432',
    });
  });
});
