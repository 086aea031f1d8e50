import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import type { Snapshot } from '../../src/live/snapshot.js';
import { ZoneTime } from '../../src/domain/time.js';
import { DetailRenderer } from '../../src/http/endpoints/detail/render.js';
import { SnapshotCache } from '../../src/render/snapshot-cache.js';

function snapshot(version: number): Snapshot {
  return { version, builtAt: version * 1000, rates: new Map(), lastUpdate: null, counts: { ok: 0, stale: 0, unavailable: 0 } };
}

describe('SnapshotCache', () => {
  const everyone = Symbol('everyone');

  it('keeps at most the given number of entries per snapshot, rendering the rest each time', () => {
    const cache = new SnapshotCache<{ n: number }>(2);
    const s = snapshot(1);
    let made = 0;
    const make = () => ({ n: ++made });
    for (const key of ['a', 'b', 'c', 'a', 'b', 'c']) cache.get(s, everyone, key, make);
    assert.equal(made, 4, 'a and b cached once each; c rendered both times');
  });

  it('keeps caches for the most recently used snapshots only', () => {
    const cache = new SnapshotCache<number>(10, 2);
    const [one, two, three] = [snapshot(1), snapshot(2), snapshot(3)];
    let made = 0;
    cache.get(one, everyone, 'k', () => ++made);
    cache.get(two, everyone, 'k', () => ++made);
    cache.get(one, everyone, 'k', () => ++made); // one is used again, so two is now the oldest
    cache.get(three, everyone, 'k', () => ++made);
    assert.equal(cache.snapshots, 2);
    assert.equal(cache.get(one, everyone, 'k', () => ++made), 1, 'one survived');
    assert.equal(cache.get(two, everyone, 'k', () => ++made), 4, 'two was evicted and rendered again');
  });

  it('keeps at most the given bytes per snapshot, counting each key and entry so empty values cost something', () => {
    const cache = new SnapshotCache<string>(1_000_000, 4, 64 * 1024, (value) => value.length);
    const s = snapshot(1);
    for (let i = 0; i < 10_000; i++) cache.get(s, everyone, `k${i}`, () => '');
    const empties = cache.held(s);
    assert.ok(empties.entries > 0 && empties.entries < 256, `${empties.entries} empty values kept in 64 KB`);
    assert.ok(empties.bytes <= 64 * 1024, 'empties.bytes <= 64 * 1024');
    const t = snapshot(2);
    for (let i = 0; i < 100; i++) cache.get(t, everyone, `k${i}`, () => 'x'.repeat(4096));
    assert.ok(cache.held(t).entries < 16, `${cache.held(t).entries} values of 4 KB kept in 64 KB`);
    assert.ok(cache.held(t).bytes <= 64 * 1024, 'cache.held(t).bytes <= 64 * 1024');
  });

  it('finds a kept value without making one', () => {
    const cache = new SnapshotCache<number>(10);
    const s = snapshot(1);
    assert.equal(cache.find(s, everyone, 'k'), undefined);
    cache.get(s, everyone, 'k', () => 7);
    assert.equal(cache.find(s, everyone, 'k'), 7);
    assert.equal(cache.find(s, Symbol('someone else'), 'k'), undefined);
  });

  it('does not keep values the caller marks uncacheable', () => {
    const cache = new SnapshotCache<number>(10);
    let made = 0;
    cache.get(snapshot(1), everyone, 'k', () => ++made, () => false);
    const s = snapshot(2);
    cache.get(s, everyone, 'k', () => ++made, () => false);
    cache.get(s, everyone, 'k', () => ++made, () => false);
    assert.equal(made, 3);
  });
});

describe('DetailRenderer cache', () => {
  const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  /** A snapshot serving these references (the body of each rate is just its key). */
  const serving = (...keys: string[]) => {
    const s = snapshot(1);
    for (const key of keys) {
      const prepared = { rate: {}, json: `{"key":"${key}"}`, webservice: '{}', hash: key.length, toman: () => prepared };
      (s.rates as Map<string, unknown>).set(key, prepared);
    }
    return s;
  };

  it('reuses a prepared answer for the same keys, but never one naming unknown keys', () => {
    const renderer = new DetailRenderer(catalogue, new ZoneTime('Asia/Tehran'));
    const s = serving('usd_free');
    assert.equal(renderer.prepare(s, 'usd_free', null), renderer.prepare(s, 'usd_free', null));
    assert.notEqual(renderer.prepare(s, 'usd_free,made_up', null), renderer.prepare(s, 'usd_free,made_up', null));
  });

  it('keeps one answer per key list as the answer reads it, whatever its spelling or length', () => {
    const renderer = new DetailRenderer(catalogue, new ZoneTime('Asia/Tehran'));
    const s = serving('usd_free', 'eur_free');
    const plain = renderer.prepare(s, 'usd_free,eur_free', null);
    const long = Array.from({ length: 1800 }, (_, i) => (i % 2 ? ' USD_free ' : 'usd_FREE')).join(',') + ',eur_free';
    assert.ok(long.length > 16_000, 'long.length > 16_000');
    for (const spelling of ['USD_FREE,EUR_FREE', ' usd_free , eur_free ', 'usd_free,usd_free,eur_free,EUR_free', long]) {
      assert.equal(renderer.prepare(s, spelling, null), plain, JSON.stringify(spelling.slice(0, 40)));
    }
    assert.equal(renderer.held(s).entries, 1);
    assert.ok(renderer.held(s).bytes < 2048, `${renderer.held(s).bytes} bytes for one short answer`);
    // Order is part of the answer (rates come in request order): another list, another entry.
    assert.notEqual(renderer.prepare(s, 'eur_free,usd_free', null), plain);
    assert.equal(renderer.held(s).entries, 2);
  });

  it('keeps at most 2,000 answers a snapshot and view, however many key lists are asked for', () => {
    const renderer = new DetailRenderer(catalogue, new ZoneTime('Asia/Tehran'));
    const s = serving('usd_free');
    const others = catalogue.references.map((reference) => reference.key).filter((key) => key !== 'usd_free');
    let lists = 0;
    for (const a of others) {
      for (const b of others.slice(0, 12)) {
        if (a === b) continue;
        renderer.prepare(s, `usd_free,${a},${b}`, null);
        lists++;
      }
    }
    assert.ok(lists > 3000, `${lists} lists`);
    assert.equal(renderer.held(s).entries, 2000);
    assert.ok(renderer.held(s).bytes <= 4 * 1024 * 1024, 'renderer.held(s).bytes <= 4 * 1024 * 1024');
  });
});
