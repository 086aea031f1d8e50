import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { RatesEngine } from '../../src/live/engine.js';
import { MarketDays } from '../../src/live/market-day.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { catalogueWithoutBands, eventually, fileSources, tempDir, writeSource } from '../support/env.js';

const USD = 'ir_fx_free_usd';

describe('MarketDays', () => {
  it('keeps the day’s open, high and low, and rolls the last value into the previous close at a new day', () => {
    const days = new MarketDays();
    assert.deepEqual(days.fieldsFor('k', '100.5', '2026-11-20'), { day_open: '100.5', day_high: '100.5', day_low: '100.5', prev_close: null, change: null, change_percent: null });
    days.fieldsFor('k', '101.25', '2026-11-20');
    const late = days.fieldsFor('k', '99.75', '2026-11-20');
    assert.deepEqual(late, { day_open: '100.5', day_high: '101.25', day_low: '99.75', prev_close: null, change: null, change_percent: null });
    const next = days.fieldsFor('k', '99.75', '2026-11-21');
    assert.deepEqual(next, { day_open: '99.75', day_high: '99.75', day_low: '99.75', prev_close: '99.75', change: '0', change_percent: '0.00' });
    assert.deepEqual(days.fieldsFor('k', '109.725', '2026-11-21'), { day_open: '99.75', day_high: '109.725', day_low: '99.75', prev_close: '99.75', change: '9.975', change_percent: '10.00' });
  });

  it('computes change exactly, also beyond 2^53 and for decimals floats get wrong', () => {
    const days = new MarketDays();
    days.fieldsFor('big', '123456789012345678', '2026-11-20');
    assert.equal(days.fieldsFor('big', '123456789012345679', '2026-11-21').change, '1');
    days.fieldsFor('dec', '0.1', '2026-11-20');
    const fields = days.fieldsFor('dec', '0.3', '2026-11-21');
    assert.equal(fields.change, '0.2');
    assert.equal(fields.change_percent, '200.00');
  });

  it('continues a seeded day and knows nothing of a value never served', () => {
    const days = new MarketDays();
    days.seed('k', { day: '2026-11-20', open: '90', high: '120', low: '80', close: '100', prevClose: '95' });
    assert.deepEqual(days.fieldsFor('k', '100', '2026-11-20'), { day_open: '90', day_high: '120', day_low: '80', prev_close: '95', change: '5', change_percent: '5.26' });
    assert.equal(days.fieldsFor('k', '130', '2026-11-20').day_high, '130');
    days.seed('old', { day: '2026-11-17', open: '1', high: '3', low: '1', close: '2', prevClose: null });
    assert.deepEqual(days.fieldsFor('old', '4', '2026-11-20'), { day_open: '4', day_high: '4', day_low: '4', prev_close: '2', change: '2', change_percent: '100.00' });
    assert.equal(days.fieldsFor('none', null, '2026-11-20').day_open, null);
  });
});

describe('the engine’s market day across local midnight, on an injected clock', () => {
  let catalogue: Catalogue;
  const root = tempDir('nerkh-day-');
  const running: RatesEngine[] = [];
  let count = 0;
  before(() => {
    catalogue = catalogueWithoutBands();
  });
  afterEach(() => {
    for (const engine of running.splice(0)) engine.stop();
  });
  after(() => root.cleanup());

  async function start(zone: string, at: string) {
    const clock = new ManualClock(Date.parse(at));
    const time = new ZoneTime(zone, clock);
    const [config] = fileSources(`${root.path}/${count++}`, ['a'], 30 * 86_400);
    const write = (value: number | string) => writeSource(config!.path!, { [USD]: { value: value as number, updated_at: new Date(clock.now()).toISOString() } }, new Date(clock.now()));
    write(100.5);
    const engine = new RatesEngine(catalogue, new SourceMonitor([config!], clock), time);
    running.push(engine);
    await engine.start();
    const usd = () => engine.current().rates.get('usd_free')!.rate;
    const json = () => JSON.parse(engine.current().rates.get('usd_free')!.json) as Record<string, unknown>;
    /** Write a value and wait until the engine serves it. */
    const serve = async (value: string) => {
      writeSource(config!.path!, { [USD]: { value: Number(value), updated_at: new Date(clock.now()).toISOString() } }, new Date(clock.now()));
      await eventually(() => usd().value === value, 4000);
    };
    return { clock, time, engine, usd, json, serve, write };
  }

  it('Tehran: the previous close is the last value before midnight, the day opens at the value served then', async () => {
    const { clock, usd, json, serve } = await start('Asia/Tehran', '2026-11-20T20:28:00Z'); // 23:58 local
    assert.deepEqual(json().day_open, 100.5);
    assert.equal(usd().prev_close, null);
    await serve('101.25');
    clock.set(Date.parse('2026-11-20T20:29:50Z'));
    await serve('100.75');
    assert.deepEqual([usd().day_open, usd().day_high, usd().day_low], ['100.5', '101.25', '100.5']);
    clock.set(Date.parse('2026-11-20T20:30:01Z')); // 00:00:01 local: the engine's own tick rolls the day
    await eventually(() => usd().prev_close === '100.75', 4000);
    assert.deepEqual([usd().day_open, usd().day_high, usd().day_low, usd().change, usd().change_percent], ['100.75', '100.75', '100.75', '0', '0.00']);
    await serve('98.5');
    assert.deepEqual([usd().day_open, usd().day_high, usd().day_low, usd().change, usd().change_percent], ['100.75', '100.75', '98.5', '-2.25', '-2.23']);
    // In the JSON served, the numbers are the exact text.
    const served = JSON.stringify(json());
    assert.ok(served.includes('"prev_close":100.75,"change":-2.25,"change_percent":-2.23'), served);
  });

  it('New York, on the 25-hour day daylight saving ends: the day rolls at local midnight, not 24 hours after the last', async () => {
    // 1 November 2026 begins at 04:00Z (EDT) and ends at 05:00Z on the 2nd (EST).
    const { clock, usd, serve } = await start('America/New_York', '2026-11-02T04:20:00Z'); // 23:20 EST on the 1st
    await serve('120');
    clock.set(Date.parse('2026-11-02T04:40:00Z')); // 23:40 EST: 24 h 40 min after the day began, still the 1st
    await serve('121');
    assert.equal(usd().prev_close, null);
    assert.equal(usd().day_high, '121');
    clock.set(Date.parse('2026-11-02T05:00:02Z')); // 00:00:02 EST on the 2nd
    await eventually(() => usd().prev_close === '121', 4000);
    assert.equal(usd().day_open, '121');
  });

  it('Santiago, where the day daylight saving starts has no midnight: it opens at 01:00', async () => {
    // 6 September 2026: 00:00 -04:00 becomes 01:00 -03:00, i.e. the day begins at 04:00Z.
    const { clock, usd, serve } = await start('America/Santiago', '2026-09-06T03:55:00Z'); // 23:55 on the 5th
    await serve('7.5');
    clock.set(Date.parse('2026-09-06T04:00:01Z')); // 01:00:01 on the 6th
    await eventually(() => usd().prev_close === '7.5', 4000);
    await serve('7.75');
    assert.deepEqual([usd().day_open, usd().day_high, usd().change, usd().change_percent], ['7.5', '7.75', '0.25', '3.33']);
  });
});
