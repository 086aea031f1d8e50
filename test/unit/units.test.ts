import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { NO_DAY_FIELDS, type Rate } from '../../src/domain/rate.js';
import { ZoneTime } from '../../src/domain/time.js';
import { inToman, rialToToman, tomanLabel } from '../../src/domain/units.js';
import { prepareRate, preparedIn } from '../../src/live/prepare.js';

const time = new ZoneTime('Asia/Tehran');
const NOW = Date.parse('2026-11-22T19:03:17Z');

describe('rial to toman', () => {
  it('divides the source digits by ten exactly, never through a float', () => {
    const cases: [string, string][] = [
      ['1103120725', '110312072.5'],
      ['123456789012345678', '12345678901234567.8'],
      ['0.3', '0.03'],
      ['300.50', '30.05'],
      ['1.5e3', '150'],
      ['10', '1'],
      ['98765432109876543210987654321', '9876543210987654321098765432.1'],
      ['0.000000000000000000000000001', '0.0000000000000000000000000001'],
    ];
    for (const [rial, toman] of cases) assert.equal(rialToToman(rial), toman, rial);
    // What a float would have said: 12345678901234568 (the last digits lost).
    assert.notEqual(String(Number('123456789012345678') / 10), '12345678901234567.8');
  });

  it('swaps only the currency word of a label', () => {
    assert.equal(tomanLabel('ریال/گرم'), 'تومان/گرم');
    assert.equal(tomanLabel('ریال/۱۰۰ ین'), 'تومان/۱۰۰ ین');
    assert.equal(tomanLabel('ریال/ریال عربستان'), 'تومان/ریال عربستان');
    assert.equal(tomanLabel('دلار/اونس'), 'دلار/اونس');
  });

  it('leaves a price in another currency as the same object', () => {
    const ounce: Rate = { key: 'gold_ounce', title: 't', value: '4000.5', unit: 'دلار/اونس', currency: 'USD', per: 'ounce', source_key: 's', updated_at: NOW, status: 'ok', source: 'a', ...NO_DAY_FIELDS };
    assert.equal(inToman(ounce), ounce);
    const gram: Rate = { ...ounce, key: 'gold_18k', value: '1103120725', unit: 'ریال/گرم', currency: 'IRR', per: 'gram' };
    assert.deepEqual(inToman(gram), { ...gram, value: '110312072.5', unit: 'تومان/گرم', currency: 'IRT' });
    assert.deepEqual(inToman({ ...gram, value: null, updated_at: null, status: 'unavailable', source: null }).value, null);
  });

  it('says the same thing in unit, currency and per for every catalogue reference, in rial and in toman', () => {
    const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
    const wordOf = new Map<string, string>();
    const currencyOfWord = new Map<string, string>();
    for (const reference of catalogue.references) {
      const rate: Rate = { key: reference.key, title: reference.title, value: '1234567.8', unit: reference.unit, currency: reference.currency, per: reference.per, source_key: reference.source_key, updated_at: NOW, status: 'ok', source: 'a', ...NO_DAY_FIELDS };
      const rial = prepareRate(rate, time);
      const toman = preparedIn(rial, 'toman');
      const shown = JSON.parse(toman.json) as Record<string, unknown>;
      const word = reference.unit.split('/')[0]!;
      if (reference.currency === 'XXX') assert.equal(reference.unit, 'واحد شاخص', reference.key);
      else {
        // One word per currency and one currency per word, so the label and `currency` never disagree.
        assert.equal(wordOf.get(reference.currency) ?? word, word, `${reference.key}: ${reference.currency} written as ${word} and ${wordOf.get(reference.currency)}`);
        assert.equal(currencyOfWord.get(word) ?? reference.currency, reference.currency, `${reference.key}: ${word} stands for two currencies`);
        wordOf.set(reference.currency, word);
        currencyOfWord.set(word, reference.currency);
        assert.ok(reference.unit.includes('/'), `${reference.key}: ${reference.unit} has no "per" half`);
      }
      assert.equal(shown.per, reference.per, reference.key);
      if (reference.currency === 'IRR') {
        assert.ok(reference.unit.startsWith('ریال/'), `${reference.key}: a rial price labelled ${reference.unit}`);
        assert.deepEqual([shown.currency, shown.unit, shown.value], ['IRT', `تومان/${reference.unit.slice('ریال/'.length)}`, 123456.78], reference.key);
        assert.notEqual(toman, rial);
      } else {
        assert.ok(!reference.unit.startsWith('ریال') || reference.unit === 'واحد شاخص', `${reference.key}: a ${reference.currency} price labelled in rial`);
        assert.equal(toman, rial, `${reference.key}: not a rial price, so the same bytes`);
      }
    }
    assert.equal(wordOf.get('IRR'), 'ریال');
  });

  it('prepares the toman form once per rate, not per request', () => {
    const rate: Rate = { key: 'gold_18k', title: 't', value: '1103120725', unit: 'ریال/گرم', currency: 'IRR', per: 'gram', source_key: 's', updated_at: NOW, status: 'ok', source: 'a', ...NO_DAY_FIELDS };
    const rial = prepareRate(rate, time);
    assert.equal(rial.toman(), rial.toman());
    assert.equal(rial.toman().toman(), rial.toman(), 'a toman rate is already in toman');
    assert.match(rial.toman().json, /"value":110312072\.5,/);
    assert.match(rial.toman().webservice, /"value":110312072\.5,"unit":"تومان\/گرم","currency":"IRT","per":"gram"/);
    // The same rate prepared again keeps its prepared object, and with it its toman form.
    assert.equal(prepareRate(rate, time, rial), rial);
  });
});

describe('Jalali date and time', () => {
  it('writes the Solar Hijri date and the local time in the zone', () => {
    assert.equal(time.jalaliDateTime(NOW), '1405/09/01 22:33:17');
    // Nowruz: the year turns at local midnight, not UTC's.
    assert.equal(time.jalaliDateTime(Date.parse('2026-03-20T20:29:59Z')), '1404/12/29 23:59:59');
    assert.equal(time.jalaliDateTime(Date.parse('2026-03-20T20:30:00Z')), '1405/01/01 00:00:00');
    assert.equal(new ZoneTime('UTC').jalaliDateTime(NOW), '1405/09/01 19:03:17');
  });
});
