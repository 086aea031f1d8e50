import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holidaysOf } from '../../src/catalogue/holidays.js';
import { MarketCalendar, type DayOverride } from '../../src/domain/market-calendar.js';
import { defaultMarketRules } from '../../src/domain/market-specs.js';

const H = 3_600_000;
const M = 60_000;
const rules = defaultMarketRules(holidaysOf);
const tehran = new MarketCalendar(rules.tehran);
const international = new MarketCalendar(rules.international);
const crypto = new MarketCalendar(rules.crypto);
/** Presentation forms (U+FB50–U+FDFF, U+FE70–U+FEFF): never in a served reason. */
const PRESENTATION_FORMS = /[\uFB50-\uFDFF\uFE70-\uFEFF]/;

describe('official holidays (date-holidays, IR)', () => {
  const ir = holidaysOf('IR');

  it('has Nowruz 1–4 and 12–13 Farvardin of 1405 and 1406, and Tasua and Ashura', () => {
    const y2026 = ir(2026);
    const y2027 = ir(2027);
    // 1 Farvardin 1405 = 2026-03-21; 1 Farvardin 1406 = 2027-03-21.
    for (const [days, year] of [[y2026, 2026], [y2027, 2027]] as const) {
      for (const day of ['03-21', '03-22', '03-23', '03-24']) assert.match(days.get(`${year}-${day}`)?.en ?? '', /Nowruz/, `${year}-${day}`);
      assert.match(days.get(`${year}-04-01`)?.en ?? '', /Islamic Republic Day/);
      assert.match(days.get(`${year}-04-02`)?.en ?? '', /Sizdah Bedar/);
      assert.match(days.get(`${year}-03-21`)?.fa ?? '', /نوروز/);
    }
    // 9 and 10 Muharram 1448 (2026) and 1449 (2027), as the library computes them.
    assert.match(y2026.get('2026-06-24')?.en ?? '', /Tasoua/);
    assert.match(y2026.get('2026-06-25')?.en ?? '', /Ashoura/);
    assert.match(y2027.get('2027-06-14')?.en ?? '', /Tasoua/);
    assert.match(y2027.get('2027-06-15')?.en ?? '', /Ashoura/);
    assert.equal(y2026.get('2026-06-24')?.fa, 'تاسوعای حسینی');
  });

  it('serves Persian names in ordinary letters (NFKC), never presentation forms', () => {
    for (const year of [2025, 2026, 2027]) {
      for (const [date, reason] of ir(year)) assert.doesNotMatch(reason.fa, PRESENTATION_FORMS, `${date}: ${reason.fa}`);
    }
  });
});

describe('market calendar', () => {
  it('closes tehran on Fridays in Tehran time, whole day', () => {
    // Friday 2026-11-20 in Tehran: 2026-11-19T20:30Z to 2026-11-20T20:30Z.
    const friday = Date.parse('2026-11-20T12:00:00+03:30');
    const state = tehran.stateAt(friday);
    assert.equal(state.state, 'closed');
    assert.equal(state.reason?.en, 'Friday');
    assert.equal(state.reason?.fa, 'جمعه');
    assert.equal(state.opensAt, Date.parse('2026-11-21T00:00:00+03:30'));
    assert.equal(tehran.stateAt(Date.parse('2026-11-19T23:59:59+03:30')).state, 'open');
    assert.equal(tehran.stateAt(Date.parse('2026-11-21T00:00:00+03:30')).state, 'open');
    assert.equal(tehran.stateAt(Date.parse('2026-11-19T23:00:00+03:30')).until, Date.parse('2026-11-20T00:00:00+03:30'));
  });

  it('closes tehran through Nowruz, a Friday before it joining the run', () => {
    // 1406: 1 Farvardin = Sunday 2027-03-21; Friday 2027-03-19, Saturday 2027-03-20 (29 Esfand, oil nationalisation).
    const state = tehran.stateAt(Date.parse('2027-03-19T10:00:00+03:30'));
    assert.equal(state.reason?.en, 'Friday');
    assert.equal(state.opensAt, Date.parse('2027-03-25T00:00:00+03:30'));
    assert.match(tehran.stateAt(Date.parse('2027-03-22T10:00:00+03:30')).reason?.en ?? '', /Nowruz/);
  });

  it('closes international from Friday 22:00 to Sunday 22:00 UTC and on 25 December and 1 January', () => {
    assert.equal(international.stateAt(Date.parse('2026-11-20T21:59:59Z')).state, 'open');
    const weekend = international.stateAt(Date.parse('2026-11-20T22:00:00Z'));
    assert.equal(weekend.state, 'closed');
    assert.equal(weekend.opensAt, Date.parse('2026-11-22T22:00:00Z'));
    assert.equal(international.stateAt(Date.parse('2026-12-25T12:00:00Z')).reason?.en, 'Christmas Day');
    assert.equal(international.stateAt(Date.parse('2027-01-01T12:00:00Z')).reason?.en, "New Year's Day");
    assert.equal(international.stateAt(Date.parse('2026-12-24T12:00:00Z')).state, 'open');
  });

  it('never closes crypto', () => {
    for (const at of ['2026-11-20T12:00:00Z', '2026-11-21T12:00:00Z', '2026-12-25T12:00:00Z', '2027-03-21T12:00:00Z']) {
      assert.equal(crypto.stateAt(Date.parse(at)).state, 'open');
    }
    assert.equal(crypto.openMs(Date.parse('2026-01-01T00:00:00Z'), Date.parse('2027-01-01T00:00:00Z')), 365 * 24 * H);
  });

  it('counts open time only, across a closure and a year end', () => {
    // Thursday 23:00 to Saturday 01:00 Tehran: 2 h open, the Friday closed.
    assert.equal(tehran.openMs(Date.parse('2026-11-19T23:00:00+03:30'), Date.parse('2026-11-21T01:00:00+03:30')), 2 * H);
    // A value updated Thursday 23:50 with 30 minutes of max age reaches it Saturday 00:20.
    assert.equal(tehran.addOpen(Date.parse('2026-11-19T23:50:00+03:30'), 30 * M), Date.parse('2026-11-21T00:20:00+03:30'));
    // Across the year end: Thursday 31 Dec 2026 23:00 UTC to Saturday 2 Jan 2027: 1 January (a Friday) closed, then the weekend.
    assert.equal(international.openMs(Date.parse('2026-12-31T23:00:00Z'), Date.parse('2027-01-02T12:00:00Z')), 1 * H);
    assert.equal(international.addOpen(Date.parse('2026-12-31T23:30:00Z'), H), Date.parse('2027-01-03T22:30:00Z'));
  });

  it('takes an operator closure and opening by local day', () => {
    const overrides = new Map<string, DayOverride>([
      ['2026-11-18', { action: 'close', reason: 'بازار بسته به دلیل اعتصاب' }],
      ['2026-11-20', { action: 'open', reason: null }],
    ]);
    const calendar = new MarketCalendar(rules.tehran, overrides);
    const closed = calendar.stateAt(Date.parse('2026-11-18T09:00:00+03:30'));
    assert.equal(closed.reason?.en, 'بازار بسته به دلیل اعتصاب');
    assert.equal(closed.opensAt, Date.parse('2026-11-19T00:00:00+03:30'));
    assert.equal(calendar.stateAt(Date.parse('2026-11-20T09:00:00+03:30')).state, 'open');
  });

  it('lists the closed days of Farvardin 1406 with their reasons, the Fridays among them', () => {
    const days = tehran.closedDays('2027-03-21', '2027-04-20');
    const byDate = new Map(days.map((day) => [day.date, day]));
    for (const date of ['2027-03-21', '2027-03-22', '2027-03-23', '2027-03-24']) assert.match(byDate.get(date)?.reason.en ?? '', /Nowruz/, date);
    assert.equal(byDate.get('2027-03-21')?.dateJalali, '1406/01/01');
    assert.match(byDate.get('2027-04-01')?.reason.en ?? '', /Islamic Republic Day/);
    assert.match(byDate.get('2027-04-02')?.reason.en ?? '', /Sizdah Bedar|Martyrdom/);
    for (const friday of ['2027-03-26', '2027-04-09', '2027-04-16']) assert.equal(byDate.get(friday)?.reason.en, 'Friday', friday);
    assert.equal(byDate.has('2027-03-25'), false);
    // International lists the Saturday and Sunday of a weekend (closed most of the day), not the Friday.
    const weekend = international.closedDays('2026-11-20', '2026-11-22').map((day) => day.date);
    assert.deepEqual(weekend, ['2026-11-21', '2026-11-22']);
  });
});
