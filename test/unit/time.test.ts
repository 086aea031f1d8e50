import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatAge, isValidTimeZone, ZoneTime } from '../../src/domain/time.js';

const at = (iso: string) => Date.parse(iso);
const ISO_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

describe('ZoneTime.format', () => {
  it('writes Tehran time with a +03:30 offset, never Z', () => {
    const tehran = new ZoneTime('Asia/Tehran');
    const text = tehran.format(at('2026-11-21T10:33:07Z'));
    assert.equal(text, '2026-11-21T14:03:07+03:30');
    assert.match(text, ISO_OFFSET);
    assert.ok(!text.includes('Z'), '!text.includes(\'Z\')');
  });

  it('keeps +03:30 in summer (Iran has no daylight saving time since 2022)', () => {
    const tehran = new ZoneTime('Asia/Tehran');
    assert.equal(tehran.format(at('2026-07-01T00:00:00Z')), '2026-07-01T03:30:00+03:30');
    assert.equal(tehran.offsetMinutes(at('2026-07-01T00:00:00Z')), 210);
  });

  it('rolls the calendar date over at local midnight', () => {
    const tehran = new ZoneTime('Asia/Tehran');
    assert.equal(tehran.format(at('2026-11-21T20:30:00Z')), '2026-11-22T00:00:00+03:30');
    assert.equal(tehran.format(at('2026-11-21T20:29:59Z')), '2026-11-21T23:59:59+03:30');
  });

  it('writes UTC as +00:00, not Z', () => {
    const utc = new ZoneTime('UTC');
    assert.equal(utc.format(at('2026-11-21T10:33:07Z')), '2026-11-21T10:33:07+00:00');
  });

  it('follows daylight saving time (Europe/Berlin)', () => {
    const berlin = new ZoneTime('Europe/Berlin');
    assert.equal(berlin.format(at('2026-01-15T12:00:00Z')), '2026-01-15T13:00:00+01:00');
    assert.equal(berlin.format(at('2026-07-15T12:00:00Z')), '2026-07-15T14:00:00+02:00');
    // The 2026 spring change is at 01:00 UTC on 29 March.
    assert.equal(berlin.format(at('2026-03-29T00:59:59Z')), '2026-03-29T01:59:59+01:00');
    assert.equal(berlin.format(at('2026-03-29T01:00:00Z')), '2026-03-29T03:00:00+02:00');
  });

  it('writes negative offsets (America/New_York, winter and summer)', () => {
    const ny = new ZoneTime('America/New_York');
    assert.equal(ny.format(at('2026-01-15T12:00:00Z')), '2026-01-15T07:00:00-05:00');
    assert.equal(ny.format(at('2026-07-15T12:00:00Z')), '2026-07-15T08:00:00-04:00');
    assert.equal(ny.offsetMinutes(at('2026-01-15T12:00:00Z')), -300);
  });

  it('writes offsets that are not whole hours', () => {
    assert.equal(new ZoneTime('Asia/Kathmandu').format(at('2026-01-15T12:00:00Z')), '2026-01-15T17:45:00+05:45');
    assert.equal(new ZoneTime('America/St_Johns').format(at('2026-01-15T12:00:00Z')), '2026-01-15T08:30:00-03:30');
  });

  it('truncates to the second', () => {
    const utc = new ZoneTime('UTC');
    assert.equal(utc.format(at('2026-01-01T00:00:00.999Z')), '2026-01-01T00:00:00+00:00');
    assert.equal(utc.format(-1500), '1969-12-31T23:59:58+00:00');
  });

  it('caches per second but follows the clock forwards and backwards', () => {
    const tehran = new ZoneTime('Asia/Tehran');
    const t = at('2026-11-21T10:33:07Z');
    assert.equal(tehran.format(t), '2026-11-21T14:03:07+03:30');
    assert.equal(tehran.format(t + 999), '2026-11-21T14:03:07+03:30');
    assert.equal(tehran.format(t + 1000), '2026-11-21T14:03:08+03:30');
    assert.equal(tehran.format(t + 86_400_000), '2026-11-22T14:03:07+03:30');
    assert.equal(tehran.format(t), '2026-11-21T14:03:07+03:30');
    assert.equal(tehran.format(t - 3_600_000), '2026-11-21T13:03:07+03:30');
  });

  it('caches offsets per instant, not once per instance', () => {
    const berlin = new ZoneTime('Europe/Berlin');
    const winter = at('2026-01-15T12:00:00Z');
    const summer = at('2026-07-15T12:00:00Z');
    for (let i = 0; i < 3; i++) {
      assert.equal(berlin.offsetMinutes(winter), 60);
      assert.equal(berlin.offsetMinutes(summer), 120);
    }
  });
});

describe('ZoneTime.day', () => {
  it('is the calendar date in the zone, not in UTC', () => {
    const tehran = new ZoneTime('Asia/Tehran');
    assert.equal(tehran.day(at('2026-11-21T21:00:00Z')), '2026-11-22');
    assert.equal(new ZoneTime('UTC').day(at('2026-11-21T21:00:00Z')), '2026-11-21');
    assert.equal(new ZoneTime('America/New_York').day(at('2026-11-22T03:00:00Z')), '2026-11-21');
  });
});

describe('ZoneTime.nextMidnight', () => {
  it('is the next local midnight in Tehran', () => {
    const tehran = new ZoneTime('Asia/Tehran');
    assert.equal(tehran.nextMidnight(at('2026-11-21T10:33:07Z')), at('2026-11-21T20:30:00Z'));
    // Exactly at midnight: the following one.
    assert.equal(tehran.nextMidnight(at('2026-11-21T20:30:00Z')), at('2026-11-22T20:30:00Z'));
  });

  it('accounts for a daylight saving change on the day', () => {
    const berlin = new ZoneTime('Europe/Berlin');
    assert.equal(berlin.nextMidnight(at('2026-03-28T12:00:00Z')), at('2026-03-28T23:00:00Z'));
    assert.equal(berlin.nextMidnight(at('2026-03-29T12:00:00Z')), at('2026-03-29T22:00:00Z'));
  });

  it(
    'lands on the next calendar day when daylight saving starts at midnight (America/Santiago)',
    () => {
      // Chile moves 00:00 → 01:00 on 6 September 2026 (at 04:00 UTC): the day starts at 04:00 UTC.
      const santiago = new ZoneTime('America/Santiago');
      const noon = at('2026-09-05T16:00:00Z');
      const end = santiago.nextMidnight(noon);
      assert.equal(santiago.day(end), '2026-09-06');
      assert.equal(santiago.day(end - 1), '2026-09-05');
      assert.equal(end, at('2026-09-06T04:00:00Z'));
    },
  );
});

describe('ZoneTime.jalaliDate', () => {
  const tehran = new ZoneTime('Asia/Tehran');

  it('gives the Solar Hijri date as YYYY/MM/DD', () => {
    assert.equal(tehran.jalaliDate(at('2026-11-21T10:33:07Z')), '1405/08/30');
  });

  it('starts the year at Nowruz (2026-03-21 is 1405/01/01)', () => {
    assert.equal(tehran.jalaliDate(at('2026-03-21T08:00:00Z')), '1405/01/01');
    assert.equal(tehran.jalaliDate(at('2026-03-20T08:00:00Z')), '1404/12/29');
  });

  it('turns over at local midnight, not UTC midnight', () => {
    // 20:31 UTC on 20 March is 00:01 on 21 March in Tehran.
    assert.equal(tehran.jalaliDate(at('2026-03-20T20:31:00Z')), '1405/01/01');
    assert.equal(tehran.jalaliDate(at('2026-03-20T20:29:00Z')), '1404/12/29');
    assert.equal(new ZoneTime('UTC').jalaliDate(at('2026-03-20T20:31:00Z')), '1404/12/29');
  });

  it('returns the right date for each day after caching earlier ones', () => {
    const zone = new ZoneTime('Asia/Tehran');
    const days = ['1405/08/29', '1405/08/30', '1405/09/01'];
    for (let round = 0; round < 2; round++) {
      assert.equal(zone.jalaliDate(at('2026-11-20T10:00:00Z')), days[0]);
      assert.equal(zone.jalaliDate(at('2026-11-21T10:00:00Z')), days[1]);
      assert.equal(zone.jalaliDate(at('2026-11-22T10:00:00Z')), days[2]);
    }
  });
});

describe('time zone validation', () => {
  it('rejects an unknown zone', () => {
    assert.throws(() => new ZoneTime('Mars/Olympus_Mons'), RangeError);
    assert.throws(() => new ZoneTime(''), RangeError);
    assert.equal(isValidTimeZone('Mars/Olympus_Mons'), false);
  });

  it('accepts known zones', () => {
    assert.equal(isValidTimeZone('Asia/Tehran'), true);
    assert.equal(isValidTimeZone('UTC'), true);
    assert.equal(new ZoneTime('Europe/Berlin').timeZone, 'Europe/Berlin');
  });
});

describe('formatAge', () => {
  it('words ages in seconds, minutes, hours and days', () => {
    assert.equal(formatAge(-3), 'just now');
    assert.equal(formatAge(0), '0 seconds ago');
    assert.equal(formatAge(1), '1 second ago');
    assert.equal(formatAge(59), '59 seconds ago');
    assert.equal(formatAge(60), '1 minute ago');
    assert.equal(formatAge(119), '1 minute ago');
    assert.equal(formatAge(3599), '59 minutes ago');
    assert.equal(formatAge(3600), '1 hour ago');
    assert.equal(formatAge(7200), '2 hours ago');
    assert.equal(formatAge(47 * 3600), '47 hours ago');
    assert.equal(formatAge(48 * 3600), '2 days ago');
    assert.equal(formatAge(10 * 86_400), '10 days ago');
  });
});
