import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { LimitDecision, LimitSpec } from '../../src/access/limiter/limiter.js';
import { eventually } from '../support/env.js';
import { needsRedis, OwnRedis, randomPrefix } from '../support/redis.js';
import { bound, cluster, hammer, type Cluster } from './limiter-helpers.js';

describe('Redis limiter when Redis goes away', needsRedis, () => {
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
    assert.ok(limiters.every((limiter) => !limiter.healthy));
    const answers = Array.from({ length: 90 }, (_, i) => limiters[i % 3]!.consume('k', spec, clock.now()));
    assert.ok(syncOnly(answers), 'no request waits on an unreachable Redis');
    const admitted = answers.filter((answer) => (answer as LimitDecision).allowed).length;
    assert.equal(admitted, 60, 'limit ÷ 3 nodes = 20 each');
    const last = answers.at(-1) as LimitDecision;
    assert.equal(last.allowed, false);
    assert.equal(last.remaining, 0);

    await server.start();
    await Promise.all(links.map((link) => link.whenReady(5000)));
    assert.ok(limiters.every((limiter) => limiter.healthy));
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
});
