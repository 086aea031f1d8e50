import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoUsableValuesError, parseSourceDocument, parseTimestamp, SourceDocumentParser, SourceFormatError } from '../../src/sources/parse.js';
import { UNKNOWN_KEY_CHARS, UNKNOWN_KEY_SAMPLE } from '../../src/sources/unknown-keys.js';

const FALLBACK = Date.parse('2026-01-01T00:00:00Z');
const DOC_TIME = '2026-11-21T14:03:07+03:30';
const DOC_MS = Date.parse('2026-11-21T10:33:07Z');
/** The clock the fixtures are read at: an hour after DOC_TIME, whatever today is. */
const NOW = DOC_MS + 3_600_000;

function parse(doc: unknown): ReturnType<typeof parseSourceDocument> {
  return parseSourceDocument(typeof doc === 'string' ? doc : JSON.stringify(doc), FALLBACK, NOW);
}

describe('parseTimestamp', () => {
  it('accepts ISO 8601 with Z or a numeric offset', () => {
    assert.equal(parseTimestamp('2026-11-21T10:33:07Z'), DOC_MS);
    assert.equal(parseTimestamp('2026-11-21T14:03:07+03:30'), DOC_MS);
    assert.equal(parseTimestamp('2026-11-21T14:03:07+0330'), DOC_MS);
    assert.equal(parseTimestamp('2026-11-21T10:33:07.250Z'), DOC_MS + 250);
    assert.equal(parseTimestamp('2026-11-21T05:33:07-05:00'), DOC_MS);
  });

  it('rejects timestamps without a zone and other shapes', () => {
    assert.equal(parseTimestamp('2026-11-21T10:33:07'), null);
    assert.equal(parseTimestamp('2026-11-21'), null);
    assert.equal(parseTimestamp('2026-11-21 10:33:07Z'), null);
    assert.equal(parseTimestamp('Sat, 21 Nov 2026 10:33:07 GMT'), null);
    assert.equal(parseTimestamp('2026-13-01T00:00:00Z'), null);
    assert.equal(parseTimestamp(1_700_000_000_000), null);
    assert.equal(parseTimestamp(null), null);
  });

  it('rejects a calendar date that does not exist', () => {
    assert.equal(parseTimestamp('2026-02-30T00:00:00Z'), null);
    assert.throws(() => parse({ updated_at: '2026-02-31T12:00:00Z', items: { a: 1 } }), SourceFormatError);
  });
});

describe('parseSourceDocument', () => {
  it('gives bare numbers the document updated_at', () => {
    const data = parse({ updated_at: DOC_TIME, items: { a: 5, b: 6 } });
    assert.deepEqual(data.items.get('a'), { raw: '5', value: 5, updatedAt: DOC_MS });
    assert.equal(data.items.get('b')?.updatedAt, DOC_MS);
    assert.equal(data.dataTime, DOC_MS);
    assert.equal(data.dropped, 0);
  });

  it('gives bare numbers the fallback time when the document has no updated_at', () => {
    const data = parse({ items: { a: 5 } });
    assert.equal(data.items.get('a')?.updatedAt, FALLBACK);
    assert.equal(data.dataTime, FALLBACK);
  });

  it('lets an object item carry its own updated_at', () => {
    const data = parse({ updated_at: DOC_TIME, items: { a: { value: 7, updated_at: '2026-11-21T10:00:00Z' }, b: { value: 8 } } });
    assert.equal(data.items.get('a')?.updatedAt, Date.parse('2026-11-21T10:00:00Z'));
    assert.equal(data.items.get('a')?.raw, '7');
    // An object without its own time takes the document's.
    assert.equal(data.items.get('b')?.updatedAt, DOC_MS);
  });

  it('keeps the exact digits the source wrote', () => {
    const text = '{"items":{"a":300.50,"b":12345678901234567890,"c":1200000,"d":{"value":0.000012},"e":1.5e3}}';
    const data = parse(text);
    assert.equal(data.items.get('a')?.raw, '300.50');
    assert.equal(data.items.get('a')?.value, 300.5);
    assert.equal(data.items.get('b')?.raw, '12345678901234567890');
    assert.equal(data.items.get('c')?.raw, '1200000');
    assert.equal(data.items.get('d')?.raw, '0.000012');
    assert.equal(data.items.get('e')?.raw, '1.5e3');
    assert.equal(data.items.get('e')?.value, 1500);
  });

  it('drops and counts insane values: zero, negative, not finite', () => {
    const data = parse('{"items":{"zero":0,"zero_float":0.0,"neg":-5,"obj_neg":{"value":-1},"huge":1e400,"ok":1}}');
    assert.deepEqual([...data.items.keys()], ['ok']);
    assert.equal(data.dropped, 5);
  });

  it('drops and counts values that are not numbers', () => {
    const data = parse({ items: { s: '5', n: null, t: true, arr: [5], o: { value: '7' }, empty: {}, ok: { value: 2 } } });
    assert.deepEqual([...data.items.keys()], ['ok']);
    assert.equal(data.dropped, 6);
  });

  it('drops an item whose own updated_at is bad or has no zone, keeping the rest', () => {
    const data = parse({ updated_at: DOC_TIME, items: { nozone: { value: 1, updated_at: '2026-11-21T10:00:00' }, junk: { value: 1, updated_at: 'yesterday' }, ok: 3 } });
    assert.deepEqual([...data.items.keys()], ['ok']);
    assert.equal(data.dropped, 2);
  });

  it('refuses a document whose items object is empty', () => {
    assert.throws(
      () => parse({ updated_at: DOC_TIME, items: {} }),
      (error: unknown) => error instanceof NoUsableValuesError && error.dropped === 0 && error.message === 'no usable values (items is empty)',
    );
  });

  it('refuses a document whose every item is dropped, counting them', () => {
    assert.throws(
      () => parse('{"updated_at":"2026-11-21T14:03:07+03:30","items":{"a":0,"b":-1,"c":1e999,"d":"7","e":{"value":5,"updated_at":"2099-01-01T00:00:00Z"}}}'),
      (error: unknown) => error instanceof NoUsableValuesError && error instanceof SourceFormatError && error.dropped === 5 && error.ahead === 1 && error.message === 'no usable values (5 dropped, 1 of them stamped ahead of the clock)',
    );
  });

  it('keeps a partial document: one usable item is enough, the rest counted as dropped', () => {
    const data = parse({ updated_at: DOC_TIME, items: { a: 0, b: -1, c: 3 } });
    assert.deepEqual([...data.items.keys()], ['c']);
    assert.equal(data.dropped, 2);
  });

  describe('dataTime', () => {
    it('is the document updated_at when present, even if items are newer', () => {
      const data = parse({ updated_at: '2026-11-21T09:00:00Z', items: { a: { value: 1, updated_at: '2026-11-21T10:00:00Z' } } });
      assert.equal(data.dataTime, Date.parse('2026-11-21T09:00:00Z'));
    });

    it('is the newest item time when the document has none', () => {
      const data = parse({
        items: { a: { value: 1, updated_at: '2026-11-21T08:00:00Z' }, b: { value: 1, updated_at: '2026-11-21T10:00:00Z' }, c: { value: 1, updated_at: '2026-11-21T09:00:00Z' } },
      });
      assert.equal(data.dataTime, Date.parse('2026-11-21T10:00:00Z'));
    });

    it('ignores dropped items when finding the newest', () => {
      const data = parse({ items: { a: { value: 1, updated_at: '2026-11-21T08:00:00Z' }, bad: { value: -1, updated_at: '2026-11-21T12:00:00Z' } } });
      assert.equal(data.dataTime, Date.parse('2026-11-21T08:00:00Z'));
    });

  });

  describe('unusable documents', () => {
    const cases: [string, string, RegExp][] = [
      ['invalid JSON', '{"items": {', /invalid JSON/],
      ['empty text', '', /invalid JSON/],
      ['an array', '[{"items":{}}]', /not a JSON object/],
      ['a number', '42', /not a JSON object/],
      ['null', 'null', /not a JSON object/],
      ['missing items', '{"updated_at":"2026-11-21T10:00:00Z"}', /items is missing/],
      ['items as an array', '{"items":[1,2]}', /items is missing or not an object/],
      ['items as a number', '{"items":5}', /items is missing or not an object/],
      ['updated_at not a string', '{"updated_at":1700000000,"items":{"a":1}}', /updated_at/],
      ['updated_at without a zone', '{"updated_at":"2026-11-21T10:00:00","items":{"a":1}}', /updated_at/],
      ['updated_at garbage', '{"updated_at":"soon","items":{"a":1}}', /updated_at/],
      ['empty items', '{"items":{}}', /^no usable values \(items is empty\)$/],
      ['only insane items', '{"items":{"a":0,"b":-2}}', /^no usable values \(2 dropped\)$/],
    ];
    for (const [name, text, message] of cases) {
      it(`throws SourceFormatError for ${name}`, () => {
        assert.throws(
          () => parseSourceDocument(text, FALLBACK, NOW),
          (error: unknown) => error instanceof SourceFormatError && message.test(error.message),
        );
      });
    }
  });
});

describe('timestamps ahead of the clock', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');
  const doc = (value: unknown) => JSON.stringify(value);

  it('clamps a stamp within the 30 s skew to the receive time: nothing is served as updated in the future', () => {
    const data = parseSourceDocument(doc({ items: { soon: { value: 1, updated_at: '2026-11-21T10:00:25Z' }, past: { value: 2, updated_at: '2026-11-21T09:59:00Z' } } }), now, now);
    assert.equal(data.items.get('soon')?.updatedAt, now);
    assert.equal(data.items.get('past')?.updatedAt, Date.parse('2026-11-21T09:59:00Z'));
    assert.equal(data.dataTime, now);
    assert.deepEqual([data.dropped, data.ahead], [0, 0]);
  });

  it('drops and counts an item stamped beyond the skew, keeping the rest', () => {
    const data = parseSourceDocument(doc({ items: { soon: { value: 1, updated_at: '2026-11-21T10:00:20Z' }, minutes: { value: 2, updated_at: '2026-11-21T10:04:00Z' }, far: { value: 3, updated_at: '2099-01-01T00:00:00Z' } } }), now, now);
    assert.deepEqual([...data.items.keys()], ['soon']);
    assert.deepEqual([data.dropped, data.ahead], [2, 2]);
  });

  it('clamps a document updated_at within the skew, and refuses one beyond it, saying by how much', () => {
    const near = parseSourceDocument(doc({ updated_at: '2026-11-21T10:00:10Z', items: { a: 1 } }), now, now);
    assert.equal(near.dataTime, now);
    assert.equal(near.items.get('a')?.updatedAt, now);
    assert.throws(() => parseSourceDocument(doc({ updated_at: '2026-11-21T10:04:00Z', items: { a: 1 } }), now, now), (error: unknown) => error instanceof SourceFormatError && error.message === 'updated_at is 4 min ahead of the clock (more than 30 s allowed)');
    assert.throws(() => parseSourceDocument(doc({ updated_at: '2026-11-21T10:00:45Z', items: { a: 1 } }), now, now), /updated_at is 45 s ahead of the clock \(more than 30 s allowed\)$/);
  });

  it('applies the rule to the fallback time too (a file modified in the future)', () => {
    assert.throws(() => parseSourceDocument(doc({ items: { a: 1 } }), now + 3_600_000, now), (error: unknown) => error instanceof NoUsableValuesError && error.ahead === 1);
    assert.equal(parseSourceDocument(doc({ items: { a: 1 } }), now + 5_000, now).items.get('a')?.updatedAt, now);
  });

  it('takes the skew as an option', () => {
    const stamped = doc({ items: { a: { value: 1, updated_at: '2026-11-21T10:02:00Z' } } });
    assert.throws(() => parseSourceDocument(stamped, now, now), NoUsableValuesError);
    assert.equal(parseSourceDocument(stamped, now, now, 180_000).items.get('a')?.updatedAt, now);
    assert.throws(() => parseSourceDocument(doc({ items: { a: { value: 1, updated_at: '2026-11-21T10:00:01Z' } } }), now, now, 0), NoUsableValuesError);
  });
});

describe('SourceDocumentParser (streamed)', () => {
  const text =
    '{"note":{"nested":[1,{"items":{"x":9}}],"s":"}{"},"items":{"a":300.50,"b":{"meta":{"value":7},"value":12345678901234567890,"updated_at":"2026-11-21T10:00:00Z"},' +
    '"c":"5","d":{"value":[1]},"e":-2,"f":{"value":1.5e3,"extra":[{"value":1}]},"g":7},"updated_at":"2026-11-21T14:03:07+03:30","tail":[{}]}';

  it('reads the same document whatever the chunks it arrives in, down to one character at a time', () => {
    const whole = parseSourceDocument(text, FALLBACK, NOW);
    assert.deepEqual([...whole.items.keys()], ['a', 'b', 'f', 'g']);
    assert.equal(whole.items.get('b')?.raw, '12345678901234567890');
    assert.equal(whole.items.get('f')?.raw, '1.5e3');
    assert.equal(whole.items.get('a')?.updatedAt, DOC_MS, 'updated_at after items still dates the bare numbers');
    assert.equal(whole.items.get('b')?.updatedAt, Date.parse('2026-11-21T10:00:00Z'));
    assert.deepEqual([whole.dropped, whole.dataTime], [3, DOC_MS]);
    for (const size of [1, 2, 3, 7, 16, 64]) {
      const parser = new SourceDocumentParser();
      for (let i = 0; i < text.length; i += size) parser.write(text.slice(i, i + size));
      assert.deepEqual(parser.finish({ fallbackTime: FALLBACK, now: NOW }), whole, `chunks of ${size}`);
    }
  });

  it('refuses a document that ends early, or has anything after it', () => {
    for (const cut of [1, 10, text.length - 1]) {
      const parser = new SourceDocumentParser();
      parser.write(text.slice(0, cut));
      assert.throws(() => parser.finish({ fallbackTime: FALLBACK, now: NOW }), (error: unknown) => error instanceof SourceFormatError && /^invalid JSON/.test(error.message), `cut at ${cut}`);
    }
    assert.throws(() => parse(`${text} {}`), /invalid JSON/);
  });

  it('stops at the first token of a document that is not an object', () => {
    const parser = new SourceDocumentParser();
    assert.throws(() => parser.write('[1,2,'), /not a JSON object/);
  });

  it('takes the last of repeated keys, as JSON.parse does', () => {
    const data = parse('{"items":{"a":1,"a":2,"b":{"value":3,"value":"x"},"c":-1,"c":4},"updated_at":"2026-01-01T00:00:00Z","updated_at":"2026-11-21T10:33:07Z"}');
    assert.deepEqual([...data.items.entries()].map(([key, value]) => [key, value.raw]), [['a', '2'], ['c', '4']]);
    assert.equal(data.dropped, 1);
    assert.equal(data.dataTime, DOC_MS);
  });

  it('accepts a leading byte-order mark and escaped keys', () => {
    const data = parse('\ufeff{"items":{"k\\u00e9y":5}}');
    assert.equal(data.items.get('kéy')?.raw, '5');
  });
});

describe('SourceDocumentParser with the keys wanted', () => {
  const read = (text: string, wanted: ReadonlySet<string> | null, fallbackTime = FALLBACK) => {
    const parser = new SourceDocumentParser(wanted);
    parser.write(text);
    return parser.finish({ fallbackTime, now: NOW });
  };

  it('stores only the wanted items, and counts and dates the rest as if it had kept them', () => {
    const text = JSON.stringify({
      items: {
        a: 5,
        other: { value: 1, updated_at: '2026-11-21T11:00:00Z' },
        bad: -1,
        ahead: { value: 2, updated_at: '2099-01-01T00:00:00Z' },
        plain: 3,
      },
    });
    const all = read(text, null);
    const some = read(text, new Set(['a', 'missing']));
    assert.deepEqual([...some.items.keys()], ['a']);
    assert.deepEqual(some.items.get('a'), all.items.get('a'));
    assert.deepEqual([some.dataTime, some.dropped, some.ahead], [all.dataTime, all.dropped, all.ahead]);
    assert.deepEqual([some.dataTime, some.dropped, some.ahead], [Date.parse('2026-11-21T11:00:00Z'), 2, 1]);
  });

  it('is usable with none of its items wanted (it still holds usable values), and refused when none is usable', () => {
    const none = read('{"updated_at":"2026-11-21T10:00:00Z","items":{"x":1}}', new Set(['a']));
    assert.deepEqual([none.items.size, none.dataTime, none.dropped], [0, Date.parse('2026-11-21T10:00:00Z'), 0]);
    assert.throws(() => read('{"items":{"x":0,"y":{"value":1,"updated_at":"2099-01-01T00:00:00Z"}}}', new Set(['a'])), (error: unknown) => error instanceof NoUsableValuesError && error.dropped === 2 && error.ahead === 1);
    assert.throws(() => read('{"items":{"x":1}}', new Set(['a']), NOW + 3_600_000), (error: unknown) => error instanceof NoUsableValuesError && error.ahead === 1);
  });

  it('keeps a document of hundreds of thousands of tiny items to the few wanted (memory does not grow with the item count)', () => {
    const parts: string[] = ['"a":7'];
    let size = 0;
    for (let i = 0; size < 4 * 1024 * 1024; i++) {
      const part = `"${i.toString(36)}x":1`;
      parts.push(part);
      size += part.length + 1;
    }
    const text = `{"items":{${parts.join(',')}}}`;
    const data = read(text, new Set(['a']));
    assert.deepEqual([...data.items.keys()], ['a']);
    assert.equal(data.items.get('a')?.raw, '7');
    // The keys not kept are counted, and only the first 20 named.
    assert.equal(data.unknownKeys.count, parts.length - 1);
    assert.deepEqual(data.unknownKeys.sample, Array.from({ length: UNKNOWN_KEY_SAMPLE }, (_, i) => `${i.toString(36)}x`));
  });

  it('names the item keys that match no wanted key, usable or not, in document order', () => {
    const data = read('{"items":{"usd_free":5,"usd_fre":6,"eur":{"value":0},"usd_fre":7,"gold":[1]}}', new Set(['usd_free']));
    assert.deepEqual(data.unknownKeys, { count: 4, sample: ['usd_fre', 'eur', 'gold'] }, 'a repeated key is counted each time, named once');
    assert.deepEqual(read('{"items":{"a":5}}', new Set(['a'])).unknownKeys, { count: 0, sample: [] });
    assert.deepEqual(read('{"items":{"a":5,"b":6}}', null).unknownKeys, { count: 0, sample: [] }, 'without the wanted keys, nothing is unknown');
  });

  it('cuts a long unknown key to 64 characters, never through a surrogate pair', () => {
    const long = 'k'.repeat(500);
    const emoji = `${'e'.repeat(62)}😀tail`;
    const data = read(JSON.stringify({ items: { a: 1, [long]: 2, [emoji]: 3 } }), new Set(['a']));
    assert.deepEqual(data.unknownKeys.sample, [`${'k'.repeat(63)}…`, `${'e'.repeat(62)}…`]);
    assert.ok(data.unknownKeys.sample.every((key) => key.length <= UNKNOWN_KEY_CHARS), 'data.unknownKeys.sample.every((key) => key.length <= UNKNOWN_KEY_CHARS)');
  });
});
