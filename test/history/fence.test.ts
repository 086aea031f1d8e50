import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { RedisLink } from '../../src/bus/link.js';
import { epochOf } from '../../src/bus/lease.js';
import { RedisLeaderLease } from '../../src/bus/redis-lease.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { HistoryRecorder } from '../../src/history/record/recorder.js';
import { FencedWriteError } from '../../src/store/candle-tables.js';
import type { Store } from '../../src/store/store.js';
import { eventually } from '../support/env.js';
import { dialects } from '../support/harness.js';
import { openLink, randomPrefix, REDIS_URL, removePrefix, silent } from '../support/redis.js';
import { needs } from '../support/services.js';
import { openFresh, snapshotOf, type Served } from './fixtures.js';

const S = 1000;
/** 14:00:00 in Tehran. */
const T0 = Date.parse('2026-11-21T10:30:00Z');

/** A leader's recorder: fenced by `epoch`, with the refusals it was told of. */
function leader(store: Store, epoch: number) {
  const clock = new ManualClock(T0);
  const time = new ZoneTime('Asia/Tehran', clock);
  const refusals: number[] = [];
  const recorder = new HistoryRecorder(store.history, time, store.health, 90, () => {}, undefined, { epoch, onRefused: (fence) => refusals.push(fence) });
  let version = 0;
  const serve = (at: number, served: Record<string, Served>) => {
    clock.set(at);
    recorder.observe(snapshotOf(++version, at, served, time), at);
  };
  return { recorder, serve, refusals };
}

for (const dialect of dialects()) {
  describe(`history writes fenced by the leader's epoch (${dialect.name})`, dialect.options, () => {
    let opened: Awaited<ReturnType<typeof openFresh>>;
    before(async () => {
      opened = await openFresh(dialect.databaseUrl);
    });
    after(() => opened.close());

    it('a paused old leader cannot overwrite its successor’s candle, and stops recording', async () => {
      const { store } = opened;
      const old = leader(store, 3);
      const successor = leader(store, 4);
      await old.recorder.load();
      // The old leader writes first; then it pauses past its lease while the successor takes over.
      old.serve(T0 + 5 * S, { usd_free: ['100', 'alpha', T0 + 4 * S] });
      await old.recorder.flush();
      await successor.recorder.load();
      successor.serve(T0 + 20 * S, { usd_free: ['101', 'beta', T0 + 19 * S] });
      await successor.recorder.flush();
      assert.equal(await store.history.fence(), 4);

      // Awake again, the old leader still holds its candle for the minute, with a value the successor never served.
      old.serve(T0 + 30 * S, { usd_free: ['99', 'alpha', T0 + 29 * S] });
      await old.recorder.flush();
      assert.deepEqual(old.refusals, [4], 'told once, with the newer epoch');
      const [minute] = await store.history.range('minute', 'usd_free', T0, T0 + 60 * S);
      assert.equal(minute!.close, '101', 'the successor’s candle stands');
      assert.equal(minute!.low, '100');
      assert.equal(old.recorder.backlog().pendingCandles, 0, 'the refused batch is dropped, not retried');
      assert.equal(store.health.reachable, true, 'a refusal is not a store outage');

      // Nothing more is written by it, and the successor goes on.
      old.serve(T0 + 40 * S, { usd_free: ['1', 'alpha', T0 + 39 * S] });
      await old.recorder.flush();
      successor.serve(T0 + 50 * S, { usd_free: ['102', 'beta', T0 + 49 * S] });
      await successor.recorder.flush();
      const [after] = await store.history.range('minute', 'usd_free', T0, T0 + 60 * S);
      assert.equal(after!.close, '102');
      assert.equal(after!.low, '100');
      assert.deepEqual(old.refusals, [4]);
    });

    it('a new leadership claims the fence as it loads, so a predecessor waking before the successor’s first write is refused', async () => {
      const { store } = opened;
      const start = await store.history.fence();
      const old = leader(store, start + 1);
      await old.recorder.load();
      old.serve(T0 + 65 * S, { coin_emami: ['7', 'alpha', T0 + 64 * S] });
      const successor = leader(store, start + 2);
      await successor.recorder.load();
      await old.recorder.flush();
      assert.deepEqual(old.refusals, [start + 2]);
      assert.deepEqual(await store.history.range('minute', 'coin_emami', T0, T0 + 120 * S), [], 'nothing of the old leader’s was written');
      // A recorder refused as it loads records nothing at all.
      const stale = leader(store, start + 1);
      await stale.recorder.load();
      assert.deepEqual(stale.refusals, [start + 2]);
      stale.serve(T0 + 70 * S, { coin_emami: ['8', 'alpha', T0 + 69 * S] });
      assert.equal(stale.recorder.backlog().pendingCandles, 0);
    });

    it('two leaders writing at once: the newer epoch’s candle always stands, whichever transaction runs first', async () => {
      const { store } = opened;
      let epoch = (await store.history.fence()) + 1;
      const candle = (close: string) => ({ start: T0 + 7_200_000, open: '1', high: '9', low: '1', close, points: 2, source: 'alpha', closeAt: T0 + 7_200_000 });
      let refused = 0;
      for (let round = 0; round < 20; round++) {
        const older = epoch++;
        const newer = epoch++;
        // Started together, in turn older or newer first: on PostgreSQL each in a transaction of its own on a pooled connection, ordered only by the fence row's lock.
        const writeOlder = () => store.history.write([{ grain: 'minute', reference: 'gold_ounce', candle: candle(`older ${round}`) }], false, older);
        const writeNewer = () => store.history.write([{ grain: 'minute', reference: 'gold_ounce', candle: candle(`newer ${round}`) }], false, newer);
        let olderResult: PromiseSettledResult<void>;
        let newerResult: PromiseSettledResult<void>;
        if (round % 2 === 0) [olderResult, newerResult] = await Promise.allSettled([writeOlder(), writeNewer()]);
        else [newerResult, olderResult] = await Promise.allSettled([writeNewer(), writeOlder()]);
        assert.equal(newerResult.status, 'fulfilled', 'the newer epoch is never refused');
        if (olderResult.status === 'rejected') {
          assert.ok(olderResult.reason instanceof FencedWriteError, 'olderResult.reason instanceof FencedWriteError');
          refused++;
        }
        const [stored] = await store.history.range('minute', 'gold_ounce', T0 + 7_200_000, T0 + 7_260_000);
        assert.equal(stored!.close, `newer ${round}`, `round ${round}`);
      }
      assert.equal(await store.history.fence(), epoch - 1);
      // The rounds where the newer ran first must have refused the older one.
      assert.ok(refused > 0, 'no write was ever refused');
    });

    it('refuses a whole batch older than the fence, in one transaction; unfenced writes (a single process, an import) pass', async () => {
      const { store } = opened;
      // A fence of its own, well above anything the test before left.
      const fence = (await store.history.fence()) + 10;
      await store.history.claimFence(fence);
      const candle = { start: T0 + 3_600_000, open: '5', high: '5', low: '5', close: '5', points: 1, source: 'alpha', closeAt: T0 + 3_600_000 };
      await assert.rejects(
        store.history.write(
          [
            { grain: 'minute', reference: 'eur_free', candle },
            { grain: 'hour', reference: 'eur_free', candle },
          ],
          false,
          fence - 1,
        ),
        (error: unknown) => error instanceof FencedWriteError && error.fence === fence && error.epoch === fence - 1,
      );
      assert.deepEqual(await store.history.range('minute', 'eur_free', T0, T0 + 7_200_000), []);
      assert.deepEqual(await store.history.range('hour', 'eur_free', T0, T0 + 7_200_000), []);
      await store.history.write([{ grain: 'minute', reference: 'eur_free', candle }]);
      assert.equal((await store.history.range('minute', 'eur_free', T0, T0 + 7_200_000)).length, 1);
      // The same epoch writes again, a newer one moves the fence up.
      await store.history.write([{ grain: 'minute', reference: 'eur_free', candle }], false, fence);
      await store.history.write([{ grain: 'minute', reference: 'eur_free', candle }], false, fence + 5);
      assert.equal(await store.history.fence(), fence + 5);
    });
  });
}

describe('the lease respects the history fence', needs('redis'), () => {
  const url = REDIS_URL!;
  const prefix = randomPrefix();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  after(() => removePrefix(url, prefix));

  function contender(id: string): { link: RedisLink; lease: RedisLeaderLease; changes: boolean[] } {
    const link = openLink(url, prefix);
    const lease = new RedisLeaderLease(link, { id, logger: silent });
    const changes: boolean[] = [];
    lease.onChange((isLeader) => changes.push(isLeader));
    closers.push(async () => {
      await lease.close();
      await link.close();
    });
    return { link, lease, changes };
  }

  it('a leader whose epoch the store has passed gives the lease up and takes it again above the fence', { timeout: 10_000 }, async () => {
    const { lease, changes } = contender('a');
    await lease.start();
    assert.ok(lease.isLeader, 'lease.isLeader');
    const epoch = epochOf(lease.token)!;
    // As after a Redis that lost its epoch counter: the store has seen a far newer epoch.
    await lease.respectFence(epoch + 100);
    assert.equal(lease.isLeader, false);
    await eventually(() => lease.isLeader, 3000, 20);
    assert.ok(epochOf(lease.token)! > epoch + 100, `epoch ${epochOf(lease.token)} after a fence of ${epoch + 100}`);
    assert.deepEqual(changes, [true, false, true]);
    // A fence below the epoch held changes nothing.
    await lease.respectFence(epoch);
    assert.ok(lease.isLeader, 'lease.isLeader');
  });

  it('a node starting after the store saw a newer epoch never leads below it', async () => {
    const { lease } = contender('b');
    await lease.respectFence(10_000);
    await lease.start();
    await eventually(() => lease.isLeader, 3000, 20);
    assert.ok(epochOf(lease.token)! > 10_000, 'epochOf(lease.token)! > 10_000');
  });
});
