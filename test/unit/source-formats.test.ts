import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Big from 'big.js';
import { ZoneTime } from '../../src/domain/time.js';
import { compileFormat, type FormatFields } from '../../src/sources/formats/compile.js';
import { createDocumentParser } from '../../src/sources/formats/index.js';
import { NoUsableValuesError, SourceFormatError, type SourceData } from '../../src/sources/source-data.js';
import { ecbDaysXml } from '../fault/format-fixtures.js';

const tehran = new ZoneTime('Asia/Tehran');
const NOW = Date.parse('2026-11-25T10:00:00Z');
const FALLBACK = Date.parse('2026-11-25T09:00:00Z');

/** Read `text` in the format `fields` describe, fed in small pieces as a stream would bring it. */
function read(fields: FormatFields, text: string, wanted: ReadonlySet<string> | null = null): SourceData {
  const parser = createDocumentParser(compileFormat(fields, tehran), wanted);
  for (let at = 0; at < text.length; at += 7) parser.write(text.slice(at, at + 7));
  return parser.finish({ fallbackTime: FALLBACK, now: NOW });
}

const values = (data: SourceData) => Object.fromEntries([...data.items].map(([key, value]) => [key, value.raw]));

describe('mapping', () => {
  const feed = JSON.stringify({
    time: '1405/09/04 12:30:00',
    data: [
      { symbol: 'EUR', price: '۱٬۲۳۰٬۰۰۰', at: 1764060000 },
      { symbol: 'USD', price: '۱٬۱۲۵٬۰۵۰٬۰۰۰', at: 1764064800000 },
      { symbol: 'GBP', price: 'N/A' },
    ],
    coins: { emami: '۱۲۳٫۴۵', bahar: '1,2,3', half: -5 },
  });

  it('reads each item where its path points, with a filter, Persian digits and an exact scale', () => {
    const data = read(
      {
        format: 'mapping',
        updated_at_path: '$.time',
        items: {
          usd: { path: "$.data[?@.symbol=='USD'].price", time_path: "$.data[?@.symbol=='USD'].at" },
          eur: { path: "$.data[?@.symbol=='EUR'].price", time_path: "$.data[?@.symbol=='EUR'].at", scale: '10' },
          emami: '$.coins.emami',
        },
      },
      feed,
    );
    assert.deepEqual(values(data), { usd: '1125050000', eur: '12300000', emami: '123.45' });
    // 1405/09/04 12:30 in Tehran; the items' own times are unix milliseconds and seconds.
    assert.equal(data.dataTime, Date.parse('2026-11-25T12:30:00+03:30'));
    assert.equal(data.items.get('usd')!.updatedAt, 1764064800000);
    assert.equal(data.items.get('eur')!.updatedAt, 1764060000000);
    assert.equal(data.items.get('emami')!.updatedAt, Date.parse('2026-11-25T12:30:00+03:30'), 'an item without a time path takes the document’s');
    assert.equal(data.dropped, 0);
  });

  it('drops what does not read, each with its reason and key, and keeps the rest', () => {
    const data = read(
      {
        format: 'mapping',
        items: {
          usd: "$.data[?@.symbol=='USD'].price",
          gbp: "$.data[?@.symbol=='GBP'].price",
          chf: "$.data[?@.symbol=='CHF'].price",
          all: '$.data[*].price',
          bahar: '$.coins.bahar',
          half: '$.coins.half',
          object: '$.coins',
          timed: { path: '$.coins.emami', time_path: '$.nowhere' },
        },
      },
      feed,
    );
    assert.deepEqual(values(data), { usd: '1125050000' });
    assert.equal(data.dataTime, FALLBACK, 'no document time: the fallback');
    assert.equal(data.dropped, 7);
    assert.deepEqual(data.dropReasons, [
      { reason: 'no_match', count: 1, source_keys: ['chf'] },
      { reason: 'several_matches', count: 1, source_keys: ['all'] },
      { reason: 'not_a_number', count: 2, source_keys: ['gbp', 'object'] },
      { reason: 'bad_grouping', count: 1, source_keys: ['bahar'] },
      { reason: 'not_positive', count: 1, source_keys: ['half'] },
      { reason: 'bad_time', count: 1, source_keys: ['timed'] },
    ]);
    assert.equal(data.droppedKeys.get('gbp'), 'not_a_number');
    assert.equal(data.droppedKeys.get('chf'), 'no_match');
  });

  it('keeps every digit of a JSON number: past 2^53, trailing zeros, an exponent written out', () => {
    const text = '{"a": 9007199254740993, "b": 71.250, "c": 1.5e3, "d": "9007199254740993", "e": 12345678901234567890, "f": {"v": 1}, "f": {"v": 2}}';
    const data = read({ format: 'mapping', items: { a: '$.a', b: '$.b', c: '$.c', d: '$.d', e: { path: '$.e', scale: '10' }, f: '$.f.v' } }, text);
    assert.deepEqual(values(data), { a: '9007199254740993', b: '71.250', c: '1500', d: '9007199254740993', e: '123456789012345678900', f: '2' });
  });

  it('compares numbers in filters as numbers', () => {
    const data = read({ format: 'mapping', items: { cheap: '$.list[?@.id == 2].price' } }, '{"list":[{"id":1,"price":10},{"id":2,"price":20.50}]}');
    assert.deepEqual(values(data), { cheap: '20.50' });
  });

  it('refuses a document that is not JSON without repeating it, or whose time does not read', () => {
    assert.throws(() => read({ format: 'mapping', items: { a: '$.a' } }, '{"a": N/A}'), (error: Error) => error instanceof SourceFormatError && error.message === 'invalid JSON');
    assert.throws(() => read({ format: 'mapping', items: { a: '$.a' } }, '{"a": 1'), (error: Error) => error instanceof SourceFormatError && /^invalid JSON \(at character \d+\)$/.test(error.message));
    assert.throws(() => read({ format: 'mapping', items: { a: '$.a' } }, ''), /the document is empty/);
    assert.throws(() => read({ format: 'mapping', updated_at_path: '$.t', items: { a: '$.a' } }, '{"a": 1}'), /^Error: updated_at_path matched nothing$/);
    assert.throws(() => read({ format: 'mapping', updated_at_path: '$.t', items: { a: '$.a' } }, '{"a": 1, "t": "soon"}'), /updated_at_path does not point at a readable time/);
    assert.throws(() => read({ format: 'mapping', updated_at_path: '$.t', items: { a: '$.a' } }, `{"a": 1, "t": ${NOW + 3_600_000}}`), /updated_at is 60 min ahead of the clock/);
  });

  it('refuses a document nested past what can be read, with a reason', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    assert.throws(() => read({ format: 'mapping', items: { a: '$.a' } }, `{"a": 5, "b": ${deep}}`), (error: Error) => error instanceof SourceFormatError && error.message === 'document nested too deeply');
    assert.throws(() => read({ format: 'mapping', items: { a: '$..a' } }, deep), (error: Error) => error instanceof SourceFormatError && /^JSONPath could not be evaluated/.test(error.message));
  });

  it('refuses a document with not one usable value, with the reasons', () => {
    assert.throws(
      () => read({ format: 'mapping', items: { a: '$.a', b: '$.b' } }, '{"a": "N/A"}'),
      (error: Error) => error instanceof NoUsableValuesError && error.dropped === 2 && error.reasons.map((r) => r.reason).join() === 'no_match,not_a_number',
    );
  });

  it('reads a byte-order mark as nothing', () => {
    assert.deepEqual(values(read({ format: 'mapping', items: { a: '$.a' } }, '\ufeff{"a": "12"}')), { a: '12' });
  });
});

describe('ecb', () => {
  const ecbXml = ecbDaysXml;
  const rates = { USD: '1.0823', JPY: '162.45', GBP: '0.83190', CHF: '0.9325', TRY: '36.7842' };

  it('reads a rate as written, and crosses exactly, half to even at 6 decimals', () => {
    const data = read({ format: 'ecb', items: { eurusd: 'USD', eurgbp: 'GBP', usdjpy: 'JPY/USD', usdeur: 'EUR/USD', gbpusd: 'USD/GBP' } }, ecbXml({ '2026-11-24': rates }));
    const cross = (top: string, bottom: string) => new Big(top).div(new Big(bottom)).round(6, Big.roundHalfEven).toFixed();
    Big.DP = 40;
    assert.deepEqual(values(data), { eurusd: '1.0823', eurgbp: '0.83190', usdjpy: cross('162.45', '1.0823'), usdeur: cross('1', '1.0823'), gbpusd: cross('1.0823', '0.83190') });
    Big.DP = 20;
    assert.equal(values(data).usdjpy, '150.097016');
    assert.equal(data.dataTime, Date.parse('2026-11-24T15:00:00Z'), '16:00 in Frankfurt');
    assert.equal(data.items.get('eurusd')!.updatedAt, data.dataTime);
  });

  it('rounds a tie to the even digit', () => {
    // 1.0000005 / 1 at 6 places: a tie, the 6th digit 0 is even and stays; 1.0000015 goes up to 2.
    const data = read({ format: 'ecb', items: { a: 'AAA/EUR', b: 'BBB/EUR', c: 'CCC/EUR' } }, ecbXml({ '2026-11-24': { AAA: '1.0000005', BBB: '1.0000015', CCC: '1.00000050001' } }));
    assert.deepEqual(values(data), { a: '1', b: '1.000002', c: '1.000001' });
  });

  it('reads a file of several days at its newest, and drops a currency it lacks', () => {
    const data = read({ format: 'ecb', items: { eurusd: 'USD', eurxyz: 'XYZ', xyzusd: 'XYZ/USD', bad: 'BAD' } }, ecbXml({ '2026-11-20': { USD: '1.05' }, '2026-11-24': { USD: '1.0823', BAD: 'n/a' }, '2026-11-21': { USD: '1.06' } }));
    assert.deepEqual(values(data), { eurusd: '1.0823' });
    assert.deepEqual(data.dropReasons, [
      { reason: 'not_a_number', count: 1, source_keys: ['bad'] },
      { reason: 'no_currency', count: 2, source_keys: ['eurxyz', 'xyzusd'] },
    ]);
  });

  it('refuses what is not the ECB shape, and never expands an entity', () => {
    assert.throws(() => read({ format: 'ecb', items: { a: 'USD' } }, '<a><b></a>'), (error: Error) => error instanceof SourceFormatError && error.message === 'invalid XML (line 1)');
    assert.throws(() => read({ format: 'ecb', items: { a: 'USD' } }, '<rates><USD>1.08</USD></rates>'), /no gesmes:Envelope/);
    assert.throws(() => read({ format: 'ecb', items: { a: 'USD' } }, ecbXml({ yesterday: rates })), /a Cube time is not a date/);
    const bomb = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "1.08">]>${ecbXml({ '2026-11-24': { USD: '&a;' } }).replace(/^<\?xml[^>]*>/, '')}`;
    assert.throws(() => read({ format: 'ecb', items: { a: 'USD' } }, bomb), NoUsableValuesError);
  });
});

describe('csv', () => {
  it('reads rows with or without a header, quoted grouping, Persian digits and their own times', () => {
    const text = 'source_key,value,updated_at\r\nusd,"1,125,050,000",1405/09/04 12:30:00\r\n\r\n# a comment\r\neur,۱۲۳٫۴۵\r\ngold,9007199254740993,2026-11-25T08:00:00Z\r\n';
    const data = read({ format: 'csv' }, text);
    assert.deepEqual(values(data), { usd: '1125050000', eur: '123.45', gold: '9007199254740993' });
    assert.equal(data.items.get('usd')!.updatedAt, Date.parse('2026-11-25T12:30:00+03:30'));
    assert.equal(data.items.get('eur')!.updatedAt, FALLBACK, 'no time of its own: the file’s');
    assert.deepEqual(values(read({ format: 'csv' }, 'usd,1200\neur,1300')), { usd: '1200', eur: '1300' });
  });

  it('drops bad rows with their reasons; keys only the feed names are counted, not named', () => {
    const data = read({ format: 'csv' }, 'usd,12.3.4\neur,1300,tomorrow\ngbp\nchf,1,2,3\nmystery,N/A\naud,1500\n,5\n', new Set(['usd', 'eur', 'gbp', 'chf', 'aud']));
    assert.deepEqual(values(data), { aud: '1500' });
    assert.deepEqual(data.dropReasons, [
      { reason: 'not_a_number', count: 2, source_keys: ['usd'] },
      { reason: 'bad_time', count: 1, source_keys: ['eur'] },
      { reason: 'bad_row', count: 3, source_keys: ['gbp', 'chf'] },
    ]);
    assert.deepEqual(data.unknownKeys, { count: 1, sample: ['mystery'] });
  });

  it('refuses a broken file without repeating it', () => {
    assert.throws(() => read({ format: 'csv' }, 'usd,"1200\neur,1300\n'), (error: Error) => error instanceof SourceFormatError && /^invalid CSV \(CSV_QUOTE_NOT_CLOSED, line \d+\)$/.test(error.message));
    assert.throws(() => read({ format: 'csv' }, 'source_key,value\n'), /no usable values \(items is empty\)/);
  });
});
