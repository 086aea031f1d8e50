import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeSnapshot, encodeSnapshot, versionOf, WireError, withVersion } from '../../src/bus/wire.js';
import type { SharedSnapshot } from '../../src/bus/snapshot-bus.js';
import { prepareRate } from '../../src/live/prepare.js';
import { BIG, realEngine, time } from './fixture.js';

describe('snapshot wire form', () => {
  let fixture: Awaited<ReturnType<typeof realEngine>>;
  let shared: SharedSnapshot;

  before(async () => {
    fixture = await realEngine();
    shared = fixture.shared();
  });
  after(() => fixture.close());

  it('carries values as number text, so no digit is lost', () => {
    const message = withVersion(7, encodeSnapshot(shared));
    assert.ok(message.includes(`"value":"${BIG}"`), 'the 18-digit value travels as a string');
    assert.ok(message.includes('"value":"2650.50"'), 'a trailing zero survives');
    const decoded = decodeSnapshot(message, time, null);
    assert.equal(decoded.snapshot.rates.get('usd_free')!.rate.value, BIG);
    assert.ok(decoded.snapshot.rates.get('usd_free')!.json.includes(`"value":${BIG},`), 'served as a JSON number with every digit');
  });

  it('re-prepares every rate to the same bytes the leader serves', () => {
    const decoded = decodeSnapshot(withVersion(7, encodeSnapshot(shared)), time, null);
    const original = shared.snapshot;
    assert.equal(decoded.snapshot.version, 7);
    assert.deepEqual([...decoded.snapshot.rates.keys()], [...original.rates.keys()], 'catalogue order kept');
    for (const [key, prepared] of original.rates) {
      const received = decoded.snapshot.rates.get(key)!;
      assert.equal(received.json, prepared.json, key);
      assert.equal(received.legacy, prepared.legacy, key);
      assert.equal(received.hash, prepared.hash, key);
    }
    assert.ok(original.counts.ok > 0 && original.counts.stale > 0 && original.counts.unavailable > 0, 'all three states covered');
    assert.deepEqual(decoded.snapshot.counts, original.counts);
    assert.equal(decoded.snapshot.builtAt, original.builtAt);
    assert.equal(decoded.snapshot.lastUpdate, original.lastUpdate);
  });

  it('carries the leader, its source health and its stale-fallback memory', () => {
    const decoded = decodeSnapshot(withVersion(3, encodeSnapshot(shared)), time, null);
    assert.equal(decoded.leader, 'node-a');
    assert.deepEqual(decoded.health, shared.health);
    assert.equal(decoded.health.length, 2);
    assert.deepEqual([...decoded.lastKnown.entries()], [...shared.lastKnown.entries()]);
    assert.equal(decoded.lastKnown.get('usd_free')!.value.raw, BIG);
  });

  it('keeps the prepared object of a rate that did not change', () => {
    const first = decodeSnapshot(withVersion(1, encodeSnapshot(shared)), time, null);
    const second = decodeSnapshot(withVersion(2, encodeSnapshot(shared)), time, first);
    assert.equal(second.snapshot.rates.get('usd_free'), first.snapshot.rates.get('usd_free'));
  });

  it('carries the market day of every rate, and a change of the day alone is a changed rate', () => {
    const first = decodeSnapshot(withVersion(1, encodeSnapshot(shared)), time, null);
    const usd = shared.snapshot.rates.get('usd_free')!.rate;
    assert.ok(usd.day_open !== null, 'the engine gave the rate its day');
    assert.deepEqual(
      [first.snapshot.rates.get('usd_free')!.rate.day_open, first.snapshot.rates.get('usd_free')!.rate.prev_close],
      [usd.day_open, usd.prev_close],
    );
    const rates = new Map(shared.snapshot.rates);
    rates.set('usd_free', prepareRate({ ...usd, day_high: '999999999999999999' }, time));
    const moved: SharedSnapshot = { ...shared, snapshot: { ...shared.snapshot, rates } };
    const second = decodeSnapshot(withVersion(2, encodeSnapshot(moved)), time, first);
    assert.notEqual(second.snapshot.rates.get('usd_free'), first.snapshot.rates.get('usd_free'));
    assert.ok(second.snapshot.rates.get('usd_free')!.json.includes('"day_high":999999999999999999'));
  });

  it('reads the version from the first bytes and refuses what is not a snapshot', () => {
    assert.equal(versionOf(withVersion(12345, encodeSnapshot(shared))), 12345);
    assert.equal(versionOf('{"format":1}'), null);
    assert.throws(() => decodeSnapshot('not json', time, null), WireError);
    assert.throws(() => decodeSnapshot('{"version":1}', time, null), WireError);
    assert.throws(() => decodeSnapshot(withVersion(1, encodeSnapshot(shared)).replace('"format":1', '"format":99'), time, null), /format 99/);
  });

  it('a new leader whose sources know nothing continues from the memory it is handed', async () => {
    const decoded = decodeSnapshot(withVersion(9, encodeSnapshot(shared)), time, null);
    const successor = await realEngine({ empty: true });
    try {
      assert.equal(successor.engine.current().rates.get('usd_free')!.rate.status, 'unavailable');
      successor.engine.adoptKnownValues(decoded.lastKnown);
      const usd = successor.engine.rebuild().rates.get('usd_free')!.rate;
      assert.equal(usd.status, 'stale');
      assert.equal(usd.value, BIG);
      assert.equal(usd.source, 'alpha');
    } finally {
      successor.close();
    }
  });
});
