import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoUsableValuesError, parseSourceDocument, parseTimestamp, SourceFormatError } from '../../src/sources/parse.js';

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
      (error: unknown) => error instanceof NoUsableValuesError && error instanceof SourceFormatError && error.dropped === 5 && error.message === 'no usable values (5 dropped)',
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
  it('drops an item stamped more than 5 minutes ahead, keeps one within the skew', () => {
    const data = parseSourceDocument(
      JSON.stringify({ items: { soon: { value: 1, updated_at: '2026-11-21T10:04:00Z' }, far: { value: 2, updated_at: '2099-01-01T00:00:00Z' } } }),
      now,
      now,
    );
    assert.deepEqual([...data.items.keys()], ['soon']);
    assert.equal(data.dropped, 1);
  });
  it('rejects a document whose own updated_at is in the future', () => {
    assert.throws(() => parseSourceDocument(JSON.stringify({ updated_at: '2026-11-21T10:30:00Z', items: { a: 1 } }), now, now), /in the future/);
  });
});
