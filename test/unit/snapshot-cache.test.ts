import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import type { Snapshot } from '../../src/live/snapshot.js';
import { ZoneTime } from '../../src/domain/time.js';
import { DetailRenderer } from '../../src/render/detail.js';
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
  it('reuses a prepared answer for the same keys, but never one naming unknown keys', () => {
    const renderer = new DetailRenderer(catalogue, new ZoneTime('Asia/Tehran'));
    const s = snapshot(1);
    const prepared = { rate: {}, json: '{"key":"usd_free"}', legacy: '{}', hash: 1, toman: () => prepared };
    (s.rates as Map<string, unknown>).set('usd_free', prepared);
    assert.equal(renderer.prepare(s, 'usd_free', null), renderer.prepare(s, 'usd_free', null));
    assert.notEqual(renderer.prepare(s, 'usd_free,made_up', null), renderer.prepare(s, 'usd_free,made_up', null));
  });
});
