import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CostAccount } from '../../src/http/shedding/cost-account.js';
import { OverloadSwitch } from '../../src/http/shedding/overload-switch.js';

describe('OverloadSwitch: hysteresis over the event-loop delay', () => {
  const thresholds = { enter: 200, leave: 50, minHoldMs: 1_000, enterSamples: 2 };

  it('enters above the high threshold and leaves only below the low one after the hold', () => {
    const overload = new OverloadSwitch(thresholds);
    assert.equal(overload.sample(150, 0), false);
    assert.equal(overload.shedding, false, 'between the thresholds is not overload');
    assert.equal(overload.sample(250, 250), false, 'one stalled sample is no overload');
    assert.equal(overload.sample(20, 375), false);
    assert.equal(overload.sample(250, 400), false);
    assert.equal(overload.sample(250, 500), true, 'two in a row are');
    assert.equal(overload.shedding, true);
    assert.equal(overload.sample(10, 500), false, 'calm, but within the hold');
    assert.equal(overload.sample(100, 1_300), false, 'after the hold, but not below the low threshold');
    assert.equal(overload.shedding, true);
    assert.equal(overload.sample(40, 1_500), true);
    assert.equal(overload.shedding, false);
  });

  it('does not flap under a signal that swings across the high threshold every sample', () => {
    const overload = new OverloadSwitch(thresholds);
    let changes = 0;
    // Overloaded, then shedding relieves the loop and load comes back: 400 ms, 20 ms, 400 ms, ... for ten seconds.
    overload.sample(400, -250);
    for (let t = 0; t < 10_000; t += 250) if (overload.sample(t % 500 === 0 ? 400 : 20, t)) changes++;
    assert.equal(changes, 1, 'entered once and held');
    assert.equal(overload.shedding, true);
    // Calm for longer than the hold: left once.
    for (let t = 10_000; t < 12_000; t += 250) if (overload.sample(20, t)) changes++;
    assert.equal(changes, 2);
    assert.equal(overload.shedding, false);
  });

  it('refuses a leave threshold above the enter threshold', () => {
    assert.throws(() => new OverloadSwitch({ enter: 50, leave: 100, minHoldMs: 0 }));
  });
});

describe('CostAccount: per-caller cost, shedding the costliest first', () => {
  it('charges, decays and forgets callers gone quiet', () => {
    const costs = new CostAccount();
    costs.charge('a', 10);
    costs.charge('a', 5);
    costs.charge('b', 1);
    assert.equal(costs.costOf('a'), 15);
    costs.decay(0.5);
    assert.equal(costs.costOf('a'), 7.5);
    for (let i = 0; i < 20; i++) costs.decay(0.5);
    assert.equal(costs.costOf('b'), 0);
  });

  it('sheds the one caller costing most of the total, not its neighbours', () => {
    const costs = new CostAccount();
    costs.charge('flood', 900);
    for (const neighbour of ['n1', 'n2', 'n3']) costs.charge(neighbour, 30);
    costs.charge('', 10);
    assert.deepEqual(costs.shedCostliest(), ['flood']);
    assert.equal(costs.isShed('flood'), true);
    for (const neighbour of ['n1', 'n2', 'n3', '']) assert.equal(costs.isShed(neighbour), false, neighbour);
  });

  it('sheds the fewest costliest callers above the fair share that make half of the total', () => {
    const costs = new CostAccount();
    for (const [caller, ms] of [['x', 300], ['y', 250], ['z', 200], ['a', 50], ['b', 50], ['c', 50]] as const) costs.charge(caller, ms);
    // Total 900, mean 150: x and y make 550 >= 450.
    assert.deepEqual(costs.shedCostliest(), ['x', 'y']);
    assert.deepEqual(costs.shed().sort(), ['x', 'y']);
  });

  it('escalates one caller at a time while still overloaded, only above the fair share, and releases all', () => {
    const costs = new CostAccount();
    costs.charge('x', 600);
    costs.charge('y', 300);
    costs.charge('z', 10);
    assert.deepEqual(costs.shedCostliest(), ['x']);
    // Total 910, mean 303.3: y is at its fair share, so it is left alone.
    assert.deepEqual(costs.shedCostliest(), []);
    costs.charge('y', 100);
    assert.deepEqual(costs.shedCostliest(), ['y']);
    assert.deepEqual(costs.shedCostliest(), [], 'z is below the mean');
    assert.equal(costs.isShed('z'), false);
  });

  it('keeps a shed caller through decay, and serves everyone after release', () => {
    const costs = new CostAccount();
    costs.charge('x', 100);
    costs.charge('y', 1);
    costs.shedCostliest();
    for (let i = 0; i < 40; i++) costs.decay(0.5);
    assert.equal(costs.isShed('x'), true);
    costs.release();
    assert.equal(costs.isShed('x'), false);
    assert.deepEqual(costs.shed(), []);
  });

  it('on a saturated loop, sheds only a caller of costly requests crowding others out, and serves it again as its share falls', () => {
    const costs = new CostAccount();
    // 100 reports of 9.9 ms.
    for (let i = 0; i < 100; i++) costs.charge('reports', 9.9);
    costs.charge('', 0.5);
    assert.deepEqual(costs.shedDominant(0.01, 4), [], 'a lone busy caller beside the probes is served at full speed');
    // 600 detail requests of 0.05 ms beside it.
    for (let i = 0; i < 600; i++) costs.charge('neighbour', 0.05);
    assert.deepEqual(costs.shedDominant(0.01, 4), ['reports']);
    assert.equal(costs.isShed('neighbour'), false);
    // Refused, it is charged nothing; the neighbour, now at full speed, takes most of the loop but is not shed: its requests are cheap.
    costs.decay(0.1);
    for (let i = 0; i < 20_000; i++) costs.charge('neighbour', 0.05);
    assert.deepEqual(costs.shedDominant(0.01, 4), []);
    assert.equal(costs.isShed('reports'), false, 'its share fell below a quarter: served again');
    assert.equal(costs.isShed('neighbour'), false);
  });

  it('on a saturated loop, sheds no one for alike requests, however many one caller sends', () => {
    const costs = new CostAccount();
    for (let i = 0; i < 9_000; i++) costs.charge('heavy', 0.05);
    for (let i = 0; i < 1_000; i++) costs.charge('light', 0.05);
    assert.deepEqual(costs.shedDominant(0.01, 4), []);
  });

  it('is bounded: a caller past the bound goes uncharged and is never shed', () => {
    const costs = new CostAccount(2);
    costs.charge('a', 1);
    costs.charge('b', 1);
    costs.charge('c', 1_000);
    assert.equal(costs.costOf('c'), 0);
    assert.equal(costs.shedCostliest().includes('c'), false);
  });
});
