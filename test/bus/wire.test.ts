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
      assert.equal(received.webservice, prepared.webservice, key);
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
    assert.deepEqual(decoded.health[0]!.unknown_keys, { count: 1, sample: ['ir_fx_free_usdx'] });
    assert.deepEqual([decoded.health[0]!.format, decoded.health[0]!.mapped, decoded.health[0]!.dropped_reasons], ['nerkh', 3, []]);
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
    assert.ok(second.snapshot.rates.get('usd_free')!.json.includes('"day_high":999999999999999999'), 'second.snapshot.rates.get(\'usd_free\')!.json.includes(\'"day_high":999999999999999999\')');
  });

  it('reads the version from the first bytes and refuses what is not a snapshot', () => {
    assert.equal(versionOf(withVersion(12345, encodeSnapshot(shared))), 12345);
    assert.equal(versionOf('{"format":1}'), null);
    assert.throws(() => decodeSnapshot('not json', time, null), WireError);
    assert.throws(() => decodeSnapshot('{"version":1}', time, null), WireError);
    assert.throws(() => decodeSnapshot(withVersion(1, encodeSnapshot(shared)).replace('"format":1', '"format":99'), time, null), /format 99/);
  });

  describe('refuses a message whose fields would be served unchecked', () => {
    /** The parsed message, loosely: the cases below put anything anywhere. */
    interface Wire {
      [field: string]: unknown;
      rates: Record<string, unknown>[] | unknown[];
      health: Record<string, unknown>[];
      last_known: unknown[][];
    }
    /** The real message with one change made to its parsed form. */
    const tampered = (change: (wire: Wire) => void): string => {
      const wire = JSON.parse(withVersion(5, encodeSnapshot(shared))) as Wire;
      change(wire);
      return JSON.stringify(wire);
    };
    const rate = (wire: Wire) => wire.rates[[...shared.snapshot.rates.keys()].indexOf('usd_free')] as Record<string, unknown>;
    const cases: [string, (wire: Wire) => void, RegExp][] = [
      ['a value that is not decimal text', (w) => (rate(w).value = '12abc'), /rates\[\d+\]\.value is "12abc"/],
      ['a value that would write JSON of its own', (w) => (rate(w).value = '1,"admin":true'), /rates\[\d+\]\.value/],
      ['a value as a JSON number rather than text', (w) => (rate(w).value = 1000), /rates\[\d+\]\.value is 1000/],
      ['a value of NaN or Infinity text', (w) => (rate(w).value = 'Infinity'), /rates\[\d+\]\.value/],
      ['a day field that is not decimal text', (w) => (rate(w).change_percent = '5%'), /rates\[\d+\]\.change_percent/],
      ['an unknown status', (w) => (rate(w).status = 'ok","evil":"1'), /rates\[\d+\]\.status/],
      ['the historical status, which no snapshot carries', (w) => (rate(w).status = 'historical'), /rates\[\d+\]\.status/],
      ['an update time that is text', (w) => (rate(w).updated_at = '2026-01-01'), /rates\[\d+\]\.updated_at/],
      ['a negative stale age', (w) => (rate(w).stale_seconds = -1), /rates\[\d+\]\.stale_seconds/],
      ['a key outside the key pattern', (w) => (rate(w).key = '<script>'), /rates\[\d+\]\.key/],
      ['an unknown unit of sale', (w) => (rate(w).per = 'bushel'), /rates\[\d+\]\.per/],
      ['a rate that is not an object', (w) => (w.rates[0] = 'usd'), /rates\[0\] is "usd"/],
      ['an unknown source state', (w) => (w.health[0]!.state = 'fine'), /health\[0\]\.state/],
      ['a source count that is text', (w) => (w.health[0]!.dropped = '3'), /health\[0\]\.dropped/],
      ['unknown keys that are not an object', (w) => (w.health[0]!.unknown_keys = 3), /health\[0\]\.unknown_keys is 3/],
      ['an unknown-key count that is negative', (w) => (w.health[0]!.unknown_keys = { count: -1, sample: [] }), /health\[0\]\.unknown_keys\.count/],
      ['more unknown keys named than a leader keeps', (w) => (w.health[0]!.unknown_keys = { count: 21, sample: Array.from({ length: 21 }, (_, i) => `k${i}`) }), /health\[0\]\.unknown_keys\.sample/],
      ['an unknown key named that is not a string, or longer than a leader keeps', (w) => (w.health[0]!.unknown_keys = { count: 2, sample: ['a', 'b'.repeat(65)] }), /health\[0\]\.unknown_keys\.sample\[1\]/],
      ['an unknown format', (w) => (w.health[0]!.format = 'xml'), /health\[0\]\.format is "xml"/],
      ['a mapped count that is negative', (w) => (w.health[0]!.mapped = -1), /health\[0\]\.mapped/],
      ['a drop reason no leader writes', (w) => (w.health[0]!.dropped_reasons = [{ reason: '<b>N/A</b>', count: 1, source_keys: [] }]), /health\[0\]\.dropped_reasons\[0\]\.reason/],
      ['a dropped key that is no key', (w) => (w.health[0]!.dropped_reasons = [{ reason: 'not_a_number', count: 1, source_keys: ['a b'] }]), /health\[0\]\.dropped_reasons\[0\]\.source_keys\[0\]/],
      ['more dropped keys named than a leader keeps', (w) => (w.health[0]!.dropped_reasons = [{ reason: 'not_a_number', count: 21, source_keys: Array.from({ length: 21 }, (_, i) => `k${i}`) }]), /health\[0\]\.dropped_reasons\[0\]\.source_keys is/],
      ['a fallback value that is not decimal text', (w) => (w.last_known[0]![1] = 'x'), /last_known\[0\]\[1\]/],
      ['a fallback entry of the wrong length', (w) => w.last_known[0]!.pop(), /last_known\[0\]/],
      ['counts missing', (w) => delete w.counts, /counts is missing/],
      ['a version of zero', (w) => (w.version = 0), /version is 0/],
    ];
    for (const [what, change, reason] of cases) {
      it(what, () => {
        assert.throws(() => decodeSnapshot(tampered(change), time, null), (error: unknown) => error instanceof WireError && reason.test(error.message));
      });
    }

    it('JSON that is not an object at all', () => {
      for (const message of ['null', '[]', '"snapshot"', '42']) assert.throws(() => decodeSnapshot(message, time, null), WireError, message);
    });

    it("a leader of an earlier release, which sends no unknown keys: read as none", () => {
      const decoded = decodeSnapshot(tampered((w) => w.health.forEach((health) => delete health.unknown_keys)), time, null);
      assert.deepEqual(decoded.health.map((health) => health.unknown_keys), [{ count: 0, sample: [] }, { count: 0, sample: [] }]);
    });

    it('a leader of an earlier release, which sends no format, mapped count or drop reasons: nerkh, none', () => {
      const decoded = decodeSnapshot(
        tampered((w) =>
          w.health.forEach((health) => {
            delete health.format;
            delete health.mapped;
            delete health.dropped_reasons;
          }),
        ),
        time,
        null,
      );
      assert.deepEqual(
        decoded.health.map((health) => [health.format, health.mapped, health.dropped_reasons]),
        [
          ['nerkh', 0, []],
          ['nerkh', 0, []],
        ],
      );
    });

    it('drop reasons a leader writes decode as they were', () => {
      const reasons = [{ reason: 'not_a_number', count: 2, source_keys: ['ir_fx_free_usd'] }];
      assert.deepEqual(decodeSnapshot(tampered((w) => (w.health[0]!.dropped_reasons = reasons)), time, null).health[0]!.dropped_reasons, reasons);
    });

    it('while the untouched message still decodes', () => {
      assert.equal(decodeSnapshot(tampered(() => {}), time, null).snapshot.rates.get('usd_free')!.rate.value, BIG);
    });
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
