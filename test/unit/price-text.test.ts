import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Big from 'big.js';
import { readJsonNumber, readPriceText, scalePrice } from '../../src/sources/formats/price-text.js';

const read = (text: string) => {
  const reading = readPriceText(text);
  return 'text' in reading ? reading.text : `drop:${reading.drop}`;
};

describe('readPriceText: prices as people write them, every digit kept', () => {
  it('reads plain digits, and integers past 2^53 to the digit', () => {
    assert.equal(read('1125050000'), '1125050000');
    assert.equal(read('9007199254740993'), '9007199254740993');
    assert.equal(read('123456789012345678901234567890'), '123456789012345678901234567890');
    assert.equal(read('71.250'), '71.250', 'trailing zeros are the source’s own digits');
    assert.equal(read('0.000012'), '0.000012');
    assert.equal(read('007'), '7');
    assert.equal(read('+15'), '15');
  });

  it('reads grouping separators in threes: comma and the Arabic thousands separator', () => {
    assert.equal(read('1,125,050,000'), '1125050000');
    assert.equal(read('1٬125٬050٬000'), '1125050000');
    assert.equal(read('12,345.678'), '12345.678');
    assert.equal(read('999'), '999');
  });

  it('reads Persian and Arabic-Indic digits and the Persian decimal separator', () => {
    assert.equal(read('۱٬۱۲۵٬۰۵۰٬۰۰۰'), '1125050000');
    assert.equal(read('۱,۱۲۵,۰۵۰,۰۰۰'), '1125050000');
    assert.equal(read('۱۲۳٫۴۵'), '123.45');
    assert.equal(read('١٢٣٫٤٥'), '123.45');
    assert.equal(read('۹۰۰۷۱۹۹۲۵۴۷۴۰۹۹۳'), '9007199254740993');
  });

  it('ignores surrounding spaces and invisible direction marks', () => {
    assert.equal(read('  1,250 '), '1250');
    assert.equal(read('\u200f۱۲۳\u200e'), '123');
    assert.equal(read('\u00a01250\u00a0'), '1250');
  });

  it('drops what could be read two ways, or not at all, with its reason', () => {
    const cases: [string, string][] = [
      ['1,2,3', 'bad_grouping'],
      ['1,5', 'bad_grouping'],
      ['12,34', 'bad_grouping'],
      ['1234,567', 'bad_grouping'],
      [',123', 'bad_grouping'],
      ['1,234,', 'bad_grouping'],
      ['1,234٬567', 'bad_grouping'],
      ['1.234,5', 'bad_grouping'],
      ['12.3.4', 'not_a_number'],
      ['1٫2.3', 'not_a_number'],
      ['', 'not_a_number'],
      ['   ', 'not_a_number'],
      ['N/A', 'not_a_number'],
      ['-', 'not_a_number'],
      ['.5', 'not_a_number'],
      ['5.', 'not_a_number'],
      ['1e5', 'not_a_number'],
      ['12 345', 'not_a_number'],
      ['$12', 'not_a_number'],
      ['Infinity', 'not_a_number'],
      ['1'.repeat(65), 'not_a_number'],
      ['-12', 'not_positive'],
      ['−12', 'not_positive'],
      ['-۱۲', 'not_positive'],
      ['0', 'not_positive'],
      ['0.00', 'not_positive'],
      ['۰', 'not_positive'],
      ['۱۲3', 'mixed_digits'],
      ['۱۲٣', 'mixed_digits'],
      ['1,۱۲۵', 'mixed_digits'],
    ];
    for (const [text, reason] of cases) assert.equal(read(text), `drop:${reason}`, JSON.stringify(text));
  });
});

describe('readJsonNumber: a JSON number as the document wrote it', () => {
  it('keeps plain digits as written, writes an exponent out in full', () => {
    assert.deepEqual(readJsonNumber('9007199254740993'), { text: '9007199254740993' });
    assert.deepEqual(readJsonNumber('300.50'), { text: '300.50' });
    assert.deepEqual(readJsonNumber('1.5e3'), { text: '1500' });
    assert.deepEqual(readJsonNumber('12E-3'), { text: '0.012' });
  });

  it('drops zero, negatives and exponents no price has', () => {
    assert.deepEqual(readJsonNumber('0'), { drop: 'not_positive' });
    assert.deepEqual(readJsonNumber('-1.5'), { drop: 'not_positive' });
    assert.deepEqual(readJsonNumber('-0'), { drop: 'not_positive' });
    assert.deepEqual(readJsonNumber('1e400'), { drop: 'not_a_number' });
    assert.deepEqual(readJsonNumber('1e999999'), { drop: 'not_a_number' });
  });
});

describe('scalePrice', () => {
  it('multiplies exactly, as big.js does by hand', () => {
    assert.equal(scalePrice('112505000', '10'), '1125050000');
    assert.equal(scalePrice('9007199254740993', '10'), '90071992547409930');
    assert.equal(scalePrice('123.45', '10'), '1234.5');
    assert.equal(scalePrice('0.1', '3'), '0.3');
    assert.equal(scalePrice('71.250', null), '71.250', 'no scale: the digits as written');
    assert.equal(scalePrice('123456789.123456789', '0.001'), new Big('123456789.123456789').times('0.001').toFixed());
  });
});
