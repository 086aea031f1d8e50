import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ManualClock } from '../../src/domain/clock.js';
import type { Reference } from '../../src/domain/reference.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets, type Interval } from '../../src/history/ranges/buckets.js';
import { HistoryReader } from '../../src/history/history-reader.js';
import { HistoryRecorder } from '../../src/history/record/recorder.js';
import { HistoryAnswers, type HistoryAnswer, type HistoryQuestion } from '../../src/history/answers/history-answers.js';
import { compress, type Encoding } from '../../src/render/compression.js';
import type { StoredCandle } from '../../src/domain/candle.js';
import { Store } from '../../src/store/store.js';
import { dialects } from '../support/harness.js';
import { threadCpuMs } from '../../src/domain/thread-cpu.js';
import { sqliteRangeThreads } from '../../src/history/ranges/read-threads.js';
import { openFresh, snapshotOf } from './fixtures.js';

const M = 60_000;
/** 14:00:00 in Tehran. */
const NOW = Date.parse('2026-11-21T10:30:00Z');
/** Ten days of minute candles before NOW. */
const CANDLES = 14_400;

const reference = (key: string): Reference => ({ key, title: `${key} دلار آزاد`, unit: 'ریال', currency: 'IRR', per: 'unit' }) as Reference;

function ask(key: string, interval: Interval, from: number, to: number, options: { toman?: boolean; encoding?: Encoding | null; now?: number; holds?: string } = {}): HistoryQuestion {
  return { reference: reference(key), interval, from, to, toman: options.toman ?? false, now: options.now ?? NOW, encoding: options.encoding ?? null, holds: (etag) => etag === options.holds };
}

function bodyOf(answer: HistoryAnswer): Buffer {
  return typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
}

async function seed(store: Store, keys: string[]): Promise<void> {
  const rows: StoredCandle[] = [];
  for (const key of keys) {
    for (let i = 0; i < CANDLES; i++) {
      const start = NOW - (CANDLES - i) * M;
      // Digits no float keeps, and decimals: the body must carry the stored text as it is.
      rows.push({ grain: 'minute', reference: key, candle: { start, open: `${1_000_000 + i}.5`, high: `12345678901234567${i % 10}`, low: '999', close: `${1_000_000 + i * 3}`, points: 1 + (i % 7), source: 'alpha', closeAt: start + 1000 } });
    }
  }
  await store.history.write(rows);
}

for (const dialect of dialects()) {
  describe(`history answers rendered in worker threads (${dialect.name})`, dialect.options, () => {
    let opened: Awaited<ReturnType<typeof openFresh>>;
    let plainStore: Store;
    const time = new ZoneTime('Asia/Tehran', new ManualClock(NOW));
    const buckets = new Buckets(time);
    let pooled: HistoryAnswers;
    let inThread: HistoryAnswers;

    before(async () => {
      opened = await openFresh(dialect.databaseUrl, { rangeThreads: sqliteRangeThreads });
      await seed(opened.store, ['usd_free', 'eur_free']);
      // The same store opened as a CLI command opens it: no workers, every answer rendered on this thread as before.
      plainStore = await Store.open({ ...opened.options, rangeThreads: undefined });
      pooled = new HistoryAnswers(new HistoryReader(opened.store.history, buckets, opened.store.health, 90), time);
      inThread = new HistoryAnswers(new HistoryReader(plainStore.history, buckets, plainStore.health, 90), time);
      assert.notEqual(opened.store.history.location, null);
      assert.equal(plainStore.history.location, null);
    });
    after(async () => {
      await pooled.close();
      await inThread.close();
      await plainStore.close();
      await opened.close();
    });

    it('answers the same bytes, ETag and compressed forms as the renderer on the event loop', async () => {
      const ranges: [Interval, number, number, boolean][] = [
        ['1m', NOW - 1000 * M, NOW + M, false],
        ['1m', NOW - 1000 * M, NOW + M, true],
        ['5m', buckets.start(NOW - 4000 * M, '5m'), buckets.start(NOW, '5m') + 5 * M, false],
        ['1h', buckets.start(NOW - 9 * 1440 * M, '1h'), buckets.start(NOW, '1h') + 60 * M, true],
        ['1d', buckets.start(NOW - 9 * 1440 * M, '1d'), buckets.start(NOW, '1d') + 1440 * M, false],
        ['1m', NOW - 3 * M, NOW - 2 * M, false],
        ['1m', NOW - 20_000 * M, NOW - 19_990 * M, false],
      ];
      for (const [interval, from, to, toman] of ranges) {
        for (const encoding of [null, 'gzip', 'br'] as const) {
          const expected = await inThread.answer(ask('usd_free', interval, from, to, { toman, encoding }));
          const got = await pooled.answer(ask('usd_free', interval, from, to, { toman, encoding }));
          const what = `${interval} ${from}–${to}${toman ? ' toman' : ''} ${encoding}`;
          assert.equal(got.etag, expected.etag, what);
          assert.ok(bodyOf(got).equals(bodyOf(expected)), what);
          assert.equal(got.compressible, (expected.body as string).length > 1024, what);
          if (encoding !== null && got.compressible) {
            assert.ok(got.encoded, `${what}: no compressed form`);
            assert.equal(got.encoded.encoding, encoding);
            const unpacked = encoding === 'gzip' ? gunzipSync(got.encoded.body) : brotliDecompressSync(got.encoded.body);
            assert.ok(unpacked.equals(bodyOf(expected)), `${what}: the compressed form says something else`);
          } else assert.equal(got.encoded, null, what);
        }
      }
      const latest = JSON.parse(bodyOf(await pooled.answer(ask('usd_free', '1m', NOW - 1000 * M, NOW + M))).toString()) as { count: number; candles: { high: unknown }[] };
      assert.equal(latest.count, 1000);
    });

    it('lets the event loop turn while a large range is rendered, and hands the loop the answer compressed', async (t) => {
      // Cold ranges each time (the blocks of neither renderer hold them): 1,000 minute candles read and rendered.
      const run = async (answers: HistoryAnswers, offset: number) => {
        // An immediate set before the question runs at the event loop's next turn: only if the answer came
        // back through the loop (from the worker) rather than being made on it. (A 1 ms timer could lose
        // the race against a worker answering within that millisecond.)
        let fired = false;
        const timer = setImmediate(() => (fired = true));
        const cpu = threadCpuMs();
        const answer = await answers.answer(ask('eur_free', '1m', NOW - (offset + 1000) * M, NOW - offset * M, { encoding: 'gzip' }));
        // On the event loop the body is then compressed there too (writeRendered); from a worker it comes compressed.
        if (answer.encoded === null) compress(bodyOf(answer), 'gzip');
        const spent = threadCpuMs() - cpu;
        clearImmediate(timer);
        assert.ok(bodyOf(answer).length > 100_000, 'not a large answer');
        return { fired, active: spent, compressed: answer.encoded !== null };
      };
      const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
      // Warm: the pool's thread is started and has loaded its modules.
      await run(pooled, 12_000);
      const offloadedMs: number[] = [];
      // A worker that answers before the loop reaches its check phase (blocks it holds, a fast query) lets
      // an answer arrive in the same turn: the loop must turn during some answers, not necessarily each.
      let turned = 0;
      const inThreadMs: number[] = [];
      for (let i = 1; i <= 9; i++) {
        // Alternating, so a busy moment of a shared machine falls on both alike; medians, so one collection or descheduling does not decide.
        const offloaded = await run(pooled, i * 1000);
        if (offloaded.fired) turned++;
        // The read, the rendering and the compression all happened in the thread: the loop only writes the bytes.
        assert.ok(offloaded.compressed, 'a rendered range came back from the worker uncompressed');
        offloadedMs.push(offloaded.active);
        inThreadMs.push((await run(inThread, i * 1000 + 500)).active);
      }
      assert.ok(turned > 0, 'the event loop never turned while a range was rendered in a worker');
      // A figure, not a check: on a loaded machine the two medians come close (the bench measures what offloading saves).
      t.diagnostic(`main-thread CPU per answer (median): ${median(offloadedMs).toFixed(2)} ms with workers, ${median(inThreadMs).toFixed(2)} ms without`);
    });

    it('keeps the latest range as bytes while the recorder has recorded nothing new, bounded in answers and bytes', async () => {
      const clock = new ManualClock(NOW);
      const recorderTime = new ZoneTime('Asia/Tehran', clock);
      const recorder = new HistoryRecorder(opened.store.history, recorderTime, opened.store.health, 90);
      await recorder.load();
      const bounds = { maxEntries: 3, maxBytes: 600 * 1024 };
      const answers = new HistoryAnswers(new HistoryReader(opened.store.history, buckets, opened.store.health, 90, recorder), time, bounds);
      try {
        const latest = (options: { encoding?: Encoding | null; now?: number; holds?: string } = {}) => answers.answer(ask('usd_free', '1m', NOW - 1000 * M, NOW + M, options));
        const first = await latest({ encoding: 'gzip' });
        const again = await latest({ encoding: 'gzip' });
        // The very bytes kept: no worker was asked again.
        assert.equal(again.body, first.body);
        assert.equal(again.encoded!.body, first.encoded!.body);
        // A caller holding the ETag a second later: the kept answer, for a 304.
        assert.equal((await latest({ now: NOW + 1000, holds: first.etag })).body, first.body);
        // A new value recorded: the answer is made again and shows it.
        recorder.observe(snapshotOf(1, NOW, { usd_free: ['1234567', 'alpha', NOW] }, recorderTime), NOW);
        const moved = await latest({ encoding: 'gzip' });
        assert.notEqual(moved.etag, first.etag);
        assert.match(bodyOf(moved).toString(), /"close":1234567,"points":1\}\]\}$/);
        // Many latest ranges: the cache stays within its bounds.
        for (const interval of ['1m', '5m', '15m', '1h', '4h', '1d'] as const) {
          for (const key of ['usd_free', 'eur_free']) {
            const to = buckets.next(buckets.start(NOW, interval), interval);
            await answers.answer(ask(key, interval, buckets.back(buckets.start(NOW, interval), interval, 999), to, { encoding: 'br' }));
          }
        }
        assert.ok(answers.held.answers <= 3, `${answers.held.answers} answers held`);
        assert.ok(answers.held.bytes <= bounds.maxBytes, `${answers.held.bytes} bytes held`);
        assert.ok(answers.held.answers >= 1, 'answers.held.answers >= 1');
      } finally {
        await answers.close();
        await recorder.stop();
      }
    });
  });
}
