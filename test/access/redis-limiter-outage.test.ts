import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { LimitDecision, LimitSpec } from '../../src/access/limiter/limiter.js';
import type { RedisLimiter } from '../../src/access/limiter/redis.js';
import type { RedisLink } from '../../src/bus/link.js';
import { eventually } from '../support/env.js';
import { OwnRedis, randomPrefix } from '../support/redis.js';
import { needs } from '../support/services.js';
import { awayFromMidnight, bound, cluster, hammer, type Cluster } from './limiter-helpers.js';

describe('Redis limiter when Redis goes away', needs('redis'), () => {
  let server: OwnRedis;
  let nodes: Cluster | null = null;
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  before(async () => {
    server = await OwnRedis.create();
    process.on('unhandledRejection', onRejection);
  });
  after(async () => {
    process.off('unhandledRejection', onRejection);
    await server.stop();
  });
  afterEach(async () => {
    await nodes?.close();
    nodes = null;
    assert.deepEqual(rejections, [], 'no unhandled rejection');
  });

  const spec: LimitSpec = { perMinute: 60, perDay: null };
  const syncOnly = (answers: (LimitDecision | Promise<LimitDecision>)[]) => answers.every((answer) => !(answer instanceof Promise));

  it('unreachable at start: each node keeps to its share, answers at once, and charges its admissions once Redis is up', { timeout: 20_000 }, async () => {
    await server.stop();
    nodes = await cluster(server.url, randomPrefix(), 3, undefined, undefined, false);
    const { limiters, links, clock } = nodes;
    assert.ok(limiters.every((limiter) => !limiter.healthy), 'limiters.every((limiter) => !limiter.healthy)');
    const answers = Array.from({ length: 90 }, (_, i) => limiters[i % 3]!.consume('k', spec, clock.now()));
    assert.ok(syncOnly(answers), 'no request waits on an unreachable Redis');
    const admitted = answers.filter((answer) => (answer as LimitDecision).allowed).length;
    assert.equal(admitted, 60, 'limit ÷ 3 nodes = 20 each');
    const last = answers.at(-1) as LimitDecision;
    assert.equal(last.allowed, false);
    assert.equal(last.remaining, 0);

    await server.start();
    await Promise.all(links.map((link) => link.whenReady(5000)));
    assert.ok(limiters.every((limiter) => limiter.healthy), 'limiters.every((limiter) => limiter.healthy)');
    // The 60 admitted while away are charged to the shared window: it stays spent.
    const raw = new Redis(server.url);
    try {
      const minuteEnds = clock.now() - (clock.now() % 60_000) + 60_000;
      await eventually(async () => Number(await raw.get(`${links[0]!.prefix}rl:k:m:${minuteEnds}`)) === 60, 3000);
    } finally {
      raw.disconnect();
    }
    const later = await hammer(limiters, 'k', spec, 30, (i) => i % 3, clock, 300);
    // At most each node's one credit, before its first exchange tells it the window is spent.
    assert.ok(later.admitted <= 3, `admitted ${later.admitted} after recovery`);
  });

  it('going away mid-window falls back to the share; coming back resumes sharing by itself', { timeout: 20_000 }, async () => {
    await server.start();
    nodes = await cluster(server.url, randomPrefix(), 3);
    const { limiters, links, clock } = nodes;
    const before = await hammer(limiters, 'k', spec, 30, (i) => i % 3, clock, 300);
    assert.equal(before.admitted, 30);

    await server.stop();
    await eventually(() => limiters.every((limiter) => !limiter.healthy), 3000);
    const during = Array.from({ length: 90 }, (_, i) => limiters[i % 3]!.consume('k', spec, clock.now()));
    assert.ok(syncOnly(during), 'no request waits while Redis is down');
    const admittedDuring = during.filter((answer) => (answer as LimitDecision).allowed).length;
    // Each node may use what it still held, then its share of 20 less what it admitted this window.
    assert.ok(admittedDuring <= 60 - 30 + 3 * 10, `admitted ${admittedDuring} while away`);

    await server.start();
    await Promise.all(links.map((link) => link.whenReady(5000)));
    clock.advance(60_000);
    const after = await hammer(limiters, 'k', spec, 120, (i) => i % 3, clock, 1500);
    const [low, high] = bound(60, 3);
    assert.ok(after.admitted >= low && after.admitted <= high, `next window after recovery: ${after.admitted}`);
  });

  /** Kill the server (it keeps nothing on disk) and start it again empty, on the same port; resolves once every node is back. */
  async function restartEmpty(links: RedisLink[], limiters: RedisLimiter[]): Promise<void> {
    await server.stop();
    await eventually(() => limiters.every((limiter) => !limiter.healthy), 3000);
    await server.start();
    await Promise.all(links.map((link) => link.whenReady(5000)));
  }

  const counter = async (name: string) => {
    const raw = new Redis(server.url);
    try {
      return Number(await raw.get(name));
    } finally {
      raw.disconnect();
    }
  };

  it('Redis restarting empty mid-minute: the nodes put back what they took, so the minute stays within its bound', { timeout: 20_000 }, async (t) => {
    await server.start();
    nodes = await cluster(server.url, randomPrefix(), 2);
    const { limiters, links, clock } = nodes;
    const [low, high] = bound(60, 2);
    const before = await hammer(limiters, 'k', spec, 120, (i) => i % 2, clock, 600);
    assert.ok(before.admitted >= low && before.admitted <= high, `before the restart: ${before.admitted}`);

    await restartEmpty(links, limiters);
    const minuteEnds = clock.now() - (clock.now() % 60_000) + 60_000;
    // Put back without waiting for traffic: each node does it as soon as it is connected again.
    await eventually(async () => (await counter(`${links[0]!.prefix}rl:k:m:${minuteEnds}`)) >= before.admitted, 3000);
    const after = await hammer(limiters, 'k', spec, 120, (i) => i % 2, clock, 1200);
    const total = before.admitted + after.admitted;
    t.diagnostic(`admitted ${before.admitted} before the restart, ${after.admitted} after`);
    assert.ok(total <= high, `admitted ${before.admitted} before the restart and ${after.admitted} after, in one minute of 60 (bound ${high})`);
  });

  for (const idle of [false, true]) {
    const when = idle ? 'for a key idle long enough to be forgotten (its day is not)' : 'in earlier minutes';
    it(`Redis restarting empty: the day window keeps what was spent of it ${when}`, { timeout: 20_000 }, async (t) => {
      await server.start();
      nodes = await cluster(server.url, randomPrefix(), 2);
      const { limiters, links, clock } = nodes;
      awayFromMidnight(clock, 10 * 60_000);
      const daily: LimitSpec = { perMinute: 1000, perDay: 100 };
      const first = await hammer(limiters, 'd', daily, 90, (i) => i % 2, clock, 400);
      assert.equal(first.admitted, 90);
      // Unused for three minutes: each node forgets the key at its next sweep, all but what it holds of the day.
      if (idle) {
        clock.advance(180_000);
        await eventually(() => limiters.every((limiter) => !limiter.tracks('d')), 5000);
      }

      await restartEmpty(links, limiters);
      clock.advance(60_000);
      const later = await hammer(limiters, 'd', daily, 200, (i) => i % 2, clock, 1200);
      const total = first.admitted + later.admitted;
      t.diagnostic(`admitted ${first.admitted} in the first minute, ${later.admitted} after the restart`);
      // The day's bound: its limit plus each node's credit of one request.
      assert.ok(total <= 100 + 2, `admitted ${first.admitted} in the first minute and ${later.admitted} after the restart, of 100 a day`);
      assert.equal(later.decisions.at(-1)!.window, 'day');
    });
  }
});

