import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Big from 'big.js';
import { compareDecimal, isPositiveDecimal, percentOf, subtractDecimal } from '../../src/domain/decimal.js';

describe('decimal arithmetic on number text', () => {
  it('subtracts exactly: no float noise, no lost digits', () => {
    assert.equal(subtractDecimal('0.3', '0.1'), '0.2');
    assert.equal(subtractDecimal('0.1', '0.3'), '-0.2');
    assert.equal(subtractDecimal('123456789012345678', '1'), '123456789012345677');
    assert.equal(subtractDecimal('1103120725', '1103120000'), '725');
    assert.equal(subtractDecimal('5', '5'), '0');
    assert.equal(subtractDecimal('1e3', '1'), '999');
    assert.equal(subtractDecimal('100000000000000000000.5', '0.25'), '100000000000000000000.25');
  });

  it('rounds percentages half up to two decimals and never writes -0.00', () => {
    assert.equal(percentOf('725', '1103120000'), '0.00');
    assert.equal(percentOf('-0.001', '100'), '0.00');
    assert.equal(percentOf('1', '3'), '33.33');
    assert.equal(percentOf('2', '3'), '66.67');
    assert.equal(percentOf('-1', '8'), '-12.50');
    assert.equal(percentOf('0.125', '1'), '12.50');
    assert.equal(percentOf('1', '1600'), '0.06');
  });

  it('compares exactly as big.js does, also where floats cannot tell', () => {
    const samples = ['0', '0.0', '-0', '1', '1.0', '1.5', '1.50', '1.05', '10', '9.999', '0.3', '0.30000000000000004', '-1', '-1.5', '-0.5', '1e3', '1000', '2.5e-3', '0.0025'];
    samples.push('123456789012345678', '123456789012345679', '9007199254740993', '9007199254740992', '100000000000000000000.1', '100000000000000000000.01');
    for (const a of samples) for (const b of samples) assert.equal(compareDecimal(a, b), new Big(a).cmp(b), `${a} vs ${b}`);
    assert.equal(compareDecimal('9007199254740993', '9007199254740992'), 1, 'above 2^53, where floats see them equal');
  });

  it('agrees with big.js on random decimals', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const decimal = () => {
      const whole = String(Math.floor(random() * 10 ** Math.floor(random() * 12)));
      const fraction = random() < 0.5 ? '' : `.${String(Math.floor(random() * 1e6)).padStart(6, '0')}`.replace(/0+$/, '').replace(/\.$/, '');
      return (random() < 0.2 ? '-' : '') + whole + fraction;
    };
    for (let i = 0; i < 5000; i++) {
      const a = decimal();
      const b = random() < 0.1 ? a : decimal();
      assert.equal(compareDecimal(a, b), new Big(a).cmp(b), `${a} vs ${b}`);
    }
  });

  it('accepts only JSON numbers above zero as prices', () => {
    for (const ok of ['1', '0.5', '123456789012345678', '1e3', '1.5E-2']) assert.equal(isPositiveDecimal(ok), true, ok);
    for (const bad of ['0', '-1', '0.0', '', 'abc', '1,5', '.5', '+5', '01', 'NaN', 'Infinity', '1e', ' 1']) assert.equal(isPositiveDecimal(bad), false, bad);
  });
});
