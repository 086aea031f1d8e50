import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { BlockCache, blockBytes, EMPTY_SETTLED_BLOCK, type CandleBlock } from '../../src/history/ranges/block-cache.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { HistoryReader } from '../../src/history/history-reader.js';
import { HistoryRecorder } from '../../src/history/record/recorder.js';
import type { StoredCandle } from '../../src/domain/candle.js';
import { dialects } from '../support/harness.js';
import { openFresh } from './fixtures.js';

const M = 60_000;
const HOUR = 3_600_000;
/** 14:00 in Tehran. */
const NOW = Date.parse('2026-11-21T10:30:00Z');

function blockOf(candles: number, liveVersion: number | null = null): CandleBlock {
  const starts = Array.from({ length: candles }, (_, i) => i * M);
  const json = starts.map((start) => `{"t":${start},"open":1,"high":1,"low":1,"close":1,"points":1}`).join(',');
  return { starts, json, ends: starts.map((_, i) => (i + 1) * 10), hash: 0, liveVersion };
}

describe('BlockCache', () => {
  it('is bounded in bytes: the least recently used blocks go first, and one larger than the whole is not kept', () => {
    const full = blockOf(100);
    const cache = new BlockCache({ maxBytes: blockBytes('k00', full) * 5, maxBlocks: 1000 });
    for (let i = 0; i < 20; i++) cache.set(`k${String(i).padStart(2, '0')}`, full);
    assert.equal(cache.size, 5);
    assert.ok(cache.calculatedSize <= blockBytes('k00', full) * 5, 'cache.calculatedSize <= blockBytes(\'k00\', full) * 5');
    assert.deepEqual([...cache.keys()].sort(), ['k15', 'k16', 'k17', 'k18', 'k19']);
    cache.set('huge', blockOf(1000));
    assert.equal(cache.get('huge'), undefined);
  });

  it('counts an empty block at its key and entry, never at nothing, and keeps at most maxBlocks', () => {
    assert.ok(blockBytes('usd_free 1d 0', EMPTY_SETTLED_BLOCK) >= 256, 'blockBytes(\'usd_free 1d 0\', EMPTY_SETTLED_BLOCK) >= 256');
    const byBytes = new BlockCache({ maxBytes: 100 * 1024, maxBlocks: 1_000_000 });
    for (let i = 0; i < 10_000; i++) byBytes.set(`usd_free 1m ${i}`, EMPTY_SETTLED_BLOCK);
    assert.ok(byBytes.size < 400, `${byBytes.size} empty blocks held in 100 KB`);
    const byCount = new BlockCache({ maxBytes: 1024 * 1024 * 1024, maxBlocks: 50 });
    for (let i = 0; i < 10_000; i++) byCount.set(`usd_free 1m ${i}`, EMPTY_SETTLED_BLOCK);
    assert.equal(byCount.size, 50);
  });
});

for (const dialect of dialects()) {
  describe(`history block cache on a recording node (${dialect.name})`, dialect.options, () => {
    let opened: Awaited<ReturnType<typeof openFresh>>;
    let reader: HistoryReader;
    const time = new ZoneTime('Asia/Tehran', new ManualClock(NOW));
    const buckets = new Buckets(time);

    before(async () => {
      opened = await openFresh(dialect.databaseUrl);
      const { store } = opened;
      // The last two hours in minutes: the one stretch that holds candles.
      const rows: StoredCandle[] = [];
      for (let start = NOW - 120 * M; start < NOW; start += M) {
        rows.push({ grain: 'minute', reference: 'usd_free', candle: { start, open: '1', high: '2', low: '1', close: '2', points: 3, source: 'alpha', closeAt: start + 1000 } });
      }
      await store.history.write(rows);
      // A recorder of its own, as on the ingest leader: open blocks are kept by its version.
      const recorder = new HistoryRecorder(store.history, time, store.health, 90);
      reader = new HistoryReader(store.history, buckets, store.health, 90, recorder, { maxBytes: 1024 * 1024, maxBlocks: 40 });
    });
    after(() => opened.close());

    it('keeps no block that starts after now, however far ranges move into the future', async () => {
      const before = reader.cached.blocks;
      for (let i = 1; i <= 50; i++) {
        const from = NOW + i * 1000 * M;
        const candles = await reader.rendered('usd_free', '1m', from, from + 1000 * M, NOW);
        assert.equal(candles.count, 0);
      }
      assert.equal(reader.cached.blocks, before, 'future blocks were cached');
    });

    it('keeps the blocks that hold candles, and answers them again from the cache', async () => {
      const first = await reader.rendered('usd_free', '1m', NOW - 120 * M, NOW, NOW);
      assert.equal(first.count, 120);
      const held = reader.cached;
      assert.ok(held.blocks >= 1 && held.bytes > first.json.length, JSON.stringify(held));
      const again = await reader.rendered('usd_free', '1m', NOW - 120 * M, NOW, NOW);
      assert.equal(again.json, first.json);
      assert.equal(again.hash, first.hash);
      assert.deepEqual(reader.cached, held);
    });

    it('keeps empty settled blocks of the far past within its bounds', async () => {
      // A thousand hours a request, each further back: some 800 blocks, none holding a candle.
      for (let i = 0; i < 200; i++) {
        const from = buckets.start(NOW - (i + 2) * 1000 * HOUR, '1h');
        const candles = await reader.rendered('usd_free', '1h', from, from + 1000 * HOUR, NOW);
        assert.equal(candles.count, 0);
      }
      const { blocks, bytes } = reader.cached;
      assert.ok(blocks <= 40, `${blocks} blocks held`);
      assert.ok(bytes <= 1024 * 1024, `${bytes} bytes held`);
      // The newest blocks held candles a moment ago; the recent range is still answered in full.
      assert.equal((await reader.rendered('usd_free', '1m', NOW - 120 * M, NOW, NOW)).count, 120);
    });
  });
}
