import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZoneTime } from '../../src/domain/time.js';
import { publishedAt } from '../../src/sources/formats/ecb.js';
import { readTime, UNIX_MS_FROM, unixTime } from '../../src/sources/formats/time-text.js';

const tehran = new ZoneTime('Asia/Tehran');
const berlin = new ZoneTime('Europe/Berlin');
// 1405/09/03 is 24 November 2026; Tehran is +03:30 all year.
const AZAR_3_22H = Date.parse('2026-11-24T22:00:00+03:30');

describe('readTime: times as feeds write them', () => {
  it('reads ISO 8601 with a zone, with T or a space', () => {
    assert.equal(readTime('2026-11-24T18:30:00Z', tehran), AZAR_3_22H);
    assert.equal(readTime('2026-11-24T22:00:00+03:30', tehran), AZAR_3_22H);
    assert.equal(readTime('2026-11-24 22:00:00+03:30', tehran), AZAR_3_22H);
  });

  it('reads a time without a zone in the configured zone', () => {
    assert.equal(readTime('2026-11-24T22:00:00', tehran), AZAR_3_22H);
    assert.equal(readTime('2026-11-24 22:00', tehran), AZAR_3_22H);
    assert.equal(readTime('2026/11/24 22:00:00', tehran), AZAR_3_22H);
    assert.equal(readTime('2026-11-24 22:00:00', berlin), Date.parse('2026-11-24T22:00:00+01:00'));
    // Summer time in Berlin: +02:00.
    assert.equal(readTime('2026-07-01 12:00:00', berlin), Date.parse('2026-07-01T12:00:00+02:00'));
    assert.equal(readTime('2026-11-24', tehran), Date.parse('2026-11-24T00:00:00+03:30'));
  });

  it('reads a Jalali date and time in the configured zone, in ASCII or Persian digits', () => {
    assert.equal(readTime('1405/09/03 22:00:00', tehran), AZAR_3_22H);
    assert.equal(readTime('1405/9/3 22:00', tehran), AZAR_3_22H);
    assert.equal(readTime('۱۴۰۵/۰۹/۰۳ ۲۲:۰۰:۰۰', tehran), AZAR_3_22H);
    assert.equal(readTime('1405-09-03 22:00:00', tehran), AZAR_3_22H);
    assert.equal(readTime('1405/01/01 00:00:00', tehran), Date.parse('2026-03-21T00:00:00+03:30'), 'Nowruz 1405');
    assert.equal(readTime('1405/09/03 22:00:00', berlin), Date.parse('2026-11-24T22:00:00+01:00'));
  });

  it('reads unix seconds and milliseconds, told apart by magnitude', () => {
    const seconds = Math.floor(AZAR_3_22H / 1000);
    assert.equal(readTime(String(seconds), tehran), AZAR_3_22H);
    assert.equal(readTime(String(AZAR_3_22H), tehran), AZAR_3_22H);
    assert.equal(readTime(`${seconds}.5`, tehran), AZAR_3_22H + 500);
    assert.equal(readTime('۱۷۹۴۱۵۰۰۰۰', tehran), 1_794_150_000_000);
    // The boundary: below it seconds, from it milliseconds (March 1973); either way no later than the year 2286.
    assert.equal(unixTime(9_999_999_999), 9_999_999_999_000);
    assert.equal(unixTime(UNIX_MS_FROM - 1), null, 'seconds past the year 2286');
    assert.equal(unixTime(UNIX_MS_FROM), UNIX_MS_FROM);
    assert.equal(unixTime(9_999_999_999_999), 9_999_999_999_999);
    assert.equal(unixTime(10_000_000_000_000), null, 'microseconds, say');
    assert.equal(unixTime(1_700_000_000), 1_700_000_000_000);
    assert.equal(unixTime(1_700_000_000_000), 1_700_000_000_000);
  });

  it('refuses what is no time', () => {
    for (const text of ['', 'yesterday', '1405/13/01 10:00', '1404/12/30 10:00', '2026-02-30 10:00', '2026-11-24 24:00', '2026-11-24 22:60', '0', '-5', '1794150000000000', 'Sat, 21 Nov 2026 10:33:07 GMT', '1405/09/03 22', '1405-09-03T22:00:00+03:30']) {
      assert.equal(readTime(text, tehran), null, JSON.stringify(text));
    }
  });
});

describe('publishedAt: an ECB reference date is 16:00 in Frankfurt', () => {
  it('is 15:00 UTC in winter and 14:00 UTC in summer', () => {
    assert.equal(publishedAt('2026-11-24'), Date.parse('2026-11-24T15:00:00Z'));
    assert.equal(publishedAt('2026-07-01'), Date.parse('2026-07-01T14:00:00Z'));
    assert.equal(publishedAt('2026-02-30'), null);
    assert.equal(publishedAt('24/11/2026'), null);
  });
});
