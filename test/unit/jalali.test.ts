import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gregorianOfJalali } from '../../src/domain/jalali.js';
import { ZoneTime } from '../../src/domain/time.js';
import { parseTimeInput, readTimeInput } from '../../src/history/ranges/range-query.js';

describe('Jalali dates', () => {
  it('converts to Gregorian as the persian calendar says', () => {
    assert.deepEqual(gregorianOfJalali(1405, 8, 10), [2026, 11, 1]);
    assert.deepEqual(gregorianOfJalali(1405, 8, 30), [2026, 11, 21]);
    assert.deepEqual(gregorianOfJalali(1405, 1, 1), [2026, 3, 21]);
    assert.deepEqual(gregorianOfJalali(1404, 1, 1), [2025, 3, 21]);
    assert.deepEqual(gregorianOfJalali(1403, 12, 30), [2025, 3, 20], 'Esfand 30 of a leap year');
    assert.deepEqual(gregorianOfJalali(1399, 10, 11), [2020, 12, 31]);
    assert.deepEqual(gregorianOfJalali(1399, 10, 12), [2021, 1, 1]);
  });

  it('round-trips every day of several years through the formatter that writes Jalali dates', () => {
    const time = new ZoneTime('UTC');
    for (let day = Date.UTC(2019, 0, 1); day < Date.UTC(2030, 0, 1); day += 86_400_000) {
      const [y, m, d] = time.jalaliDate(day).split('/').map(Number) as [number, number, number];
      const date = new Date(day);
      assert.deepEqual(gregorianOfJalali(y, m, d), [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()], time.jalaliDate(day));
    }
  });

  it('refuses days the calendar does not have', () => {
    assert.equal(gregorianOfJalali(1404, 12, 30), null, 'Esfand 30 of a common year');
    assert.equal(gregorianOfJalali(1405, 7, 31), null);
    assert.equal(gregorianOfJalali(1405, 13, 1), null);
    assert.equal(gregorianOfJalali(1405, 0, 1), null);
    assert.equal(gregorianOfJalali(1405, 1, 0), null);
  });
});

describe('time input (from, to, at, CSV dates)', () => {
  it('reads Gregorian dates, Jalali dates (year below 1700) and date-times with an offset', () => {
    assert.deepEqual(parseTimeInput('from', '2026-11-01'), { day: [2026, 11, 1] });
    assert.deepEqual(parseTimeInput('from', '1405-08-10'), { day: [2026, 11, 1] });
    assert.deepEqual(parseTimeInput('from', '2026-11-01T10:00:00+03:30'), { instant: Date.parse('2026-11-01T06:30:00Z') });
    assert.deepEqual(parseTimeInput('from', '2026-11-01T06:30:00Z'), { instant: Date.parse('2026-11-01T06:30:00Z') });
  });

  it('takes `/` or `-` between a date’s parts (Nerkh writes Jalali dates with slashes), one or two digits', () => {
    for (const text of ['1405/08/10', '1405-08-10', '1405/8/10', '2026/11/01', '2026-11-1']) assert.deepEqual(readTimeInput(text), { day: [2026, 11, 1] }, text);
    for (const text of ['1405/08-10', '1405.08.10', '1405/008/10', '14050810']) assert.ok('error' in readTimeInput(text), text);
  });

  it('reads Persian and Arabic-Indic digits as ASCII ones, and quotes a refused text as written', () => {
    for (const text of ['۱۴۰۵/۰۸/۱۰', '١٤٠٥-٠٨-١٠', '۲۰۲۶-۱۱-۰۱']) assert.deepEqual(readTimeInput(text), { day: [2026, 11, 1] }, text);
    assert.deepEqual(readTimeInput('۲۰۲۶-۱۱-۱۰T۱۴:۳۰:۰۰+۰۳:۳۰'), { instant: Date.parse('2026-11-10T11:00:00Z') });
    assert.deepEqual(readTimeInput('٢٠٢٦-١١-١٠T١٤:٣٠:٠٠ ٠٣:٣٠'), { instant: Date.parse('2026-11-10T11:00:00Z') });
    assert.deepEqual(readTimeInput('۱۴۰۵/۱۳/۰۱'), { error: '"۱۴۰۵/۱۳/۰۱" is not a date of the Jalali calendar' });
  });

  it('reads an offset whose `+` arrived as a space (an unencoded + in a query string) as +, and a `-` as it is', () => {
    const instant = Date.parse('2026-11-10T11:00:00Z');
    assert.deepEqual(readTimeInput('2026-11-10T14:30:00 03:30'), { instant });
    assert.deepEqual(readTimeInput('2026-11-10T14:30 0330'), { instant });
    assert.deepEqual(readTimeInput('2026-11-10T14:30:00.250 03:30'), { instant: instant + 250 });
    assert.deepEqual(readTimeInput('2026-11-10T07:00:00-04:00'), { instant });
    // Any other space is not a lost sign: refused, and the message says how to send a +.
    assert.throws(
      () => parseTimeInput('at', '2026-11-10 14:30:00 03:30'),
      (error: Error & { code?: string }) => error.code === 'INVALID_PARAMETER' && /%2B/.test(error.message),
    );
  });

  it('names the parameter and says what is wrong', () => {
    for (const [text, why] of [
      ['2026-02-30', /not a calendar date/],
      ['1404-12-30', /not a date of the Jalali calendar/],
      ['2026-11-01T10:00:00', /date-time with an offset/],
      ['yesterday', /date-time with an offset/],
      ['2026-11-01T25:00:00+03:30', /date-time with an offset/],
    ] as const) {
      assert.throws(
        () => parseTimeInput('to', text),
        (error: Error & { code?: string }) => error.code === 'INVALID_PARAMETER' && error.message.startsWith('Query parameter "to" is invalid') && why.test(error.message),
        text,
      );
      assert.ok('error' in readTimeInput(text), '\'error\' in readTimeInput(text)');
    }
  });
});
