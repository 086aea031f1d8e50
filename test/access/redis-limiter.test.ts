import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { LimitDecision, LimitSpec } from '../../src/access/limiter/limiter.js';
import type { RedisLimiter } from '../../src/access/limiter/redis.js';
import { eventually } from '../support/env.js';
import { OwnRedis, randomPrefix, REDIS_URL, removePrefix } from '../support/redis.js';
import { needs } from '../support/services.js';
import { awayFromMidnight, bound, cluster, hammer, yieldToIo, type Cluster } from './limiter-helpers.js';

describe('Redis limiter across nodes', needs('redis'), () => {
  const url = REDIS_URL!;
  let prefix: string;
  let nodes: Cluster | null = null;

  afterEach(async () => {
    await nodes?.close();
    nodes = null;
    await removePrefix(url, prefix);
  });

  async function start(size: number): Promise<Cluster> {
    prefix = randomPrefix();
    nodes = await cluster(url, prefix, size);
    return nodes;
  }

  /**
   * What the shared minute counter holds once every node has handed its unused quota back: exactly
   * what the nodes admitted, if they shared through Redis. (Nodes that could not reach it would
   * each keep to their share, which adds up to the limit too, and leave the counter empty.)
   */
  async function countedInRedis(limiters: RedisLimiter[], keyId: string, admitted: number, clock: { now(): number }): Promise<number> {
    await Promise.all(limiters.map((limiter) => limiter.close()));
    const minuteEnds = clock.now() - (clock.now() % 60_000) + 60_000;
    const raw = new Redis(url);
    try {
      let counted = 0;
      await eventually(async () => (counted = Number(await raw.get(`${prefix}rl:${keyId}:m:${minuteEnds}`))) === admitted, 2000).catch(() => {});
      return counted;
    } finally {
      raw.disconnect();
    }
  }

  for (const size of [2, 3]) {
    for (const perMinute of [60, 6000]) {
      it(`${size} nodes hammering one key with ${perMinute}/min, spread evenly, admit between the limit and limit + 1 % + nodes, counted in Redis`, async () => {
        const { limiters, clock } = await start(size);
        const spec: LimitSpec = { perMinute, perDay: null };
        const result = await hammer(limiters, 'k1', spec, perMinute * 2, (i) => i % size, clock, 2000);
        const [low, high] = bound(perMinute, size);
        assert.ok(result.admitted >= low && result.admitted <= high, `admitted ${result.admitted} (per node ${result.perNode.join('/')}), bound [${low}, ${high}]`);
        assert.ok(limiters.every((limiter) => limiter.healthy), 'every node reached Redis throughout');
        assert.equal(await countedInRedis(limiters, 'k1', result.admitted, clock), result.admitted, 'every admission went through the shared counter');
      });
    }
  }

  it('skewed traffic (90 / 9 / 1 %) stays within the bound', async () => {
    const { limiters, clock } = await start(3);
    const spec: LimitSpec = { perMinute: 6000, perDay: null };
    const pick = (i: number) => (i % 100 < 90 ? 0 : i % 100 < 99 ? 1 : 2);
    const result = await hammer(limiters, 'skewed', spec, 12_000, pick, clock, 4000);
    const [low, high] = bound(6000, 3);
    // Slices held by the quiet nodes go back by exchanges with Redis; on a loaded machine the
    // last of them may still be on the way when the burst ends, so demand goes on a little
    // longer (as it would) and the window must then have given out at least the limit.
    let admitted = result.admitted;
    for (let round = 0; admitted < low && round < 30; round++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      admitted += (await hammer(limiters, 'skewed', spec, 100, pick, clock)).admitted;
    }
    assert.ok(admitted >= low && admitted <= high, `admitted ${admitted} (burst ${result.perNode.join('/')})`);
  });

  it('quota left on a node whose traffic moved elsewhere goes back once another node finds the window spent', async () => {
    const { limiters, clock } = await start(2);
    const spec: LimitSpec = { perMinute: 600, perDay: null };
    const first = await hammer(limiters, 'moving', spec, 200, () => 0, clock, 200);
    assert.equal(first.admitted, 200);
    // All traffic now reaches node 1, while node 0 holds an unused slice.
    const moved = await hammer(limiters, 'moving', spec, 1200, () => 1, clock, 3000);
    const total = first.admitted + moved.admitted;
    // Node 0 keeps one request's worth for its own next request.
    assert.ok(total >= 600 - 1 && total <= bound(600, 2)[1], `admitted ${total} in the window`);
  });

  it('answers a key it holds quota for at once: the hot path never waits on Redis', async () => {
    const { limiters, clock } = await start(3);
    const spec: LimitSpec = { perMinute: 100_000, perDay: null };
    await hammer(limiters, 'hot', spec, 300, (i) => i % 3, clock, 300);
    const steady = await hammer(limiters, 'hot', spec, 3000, (i) => i % 3, clock, 1000);
    assert.equal(steady.waited, 0, 'no request of a seen key waited');
    assert.equal(steady.admitted, 3000);
  });

  it('a key seen for the first time is admitted at once on credit; a burst past the credit waits for one exchange', async () => {
    const { limiters, clock } = await start(3);
    const spec: LimitSpec = { perMinute: 60, perDay: null };
    const first = limiters[0]!.consume('fresh', spec, clock.now());
    assert.ok(!(first instanceof Promise), 'first sight answers synchronously');
    assert.equal(first.allowed, true);
    const burst = [1, 2, 3, 4].map(() => limiters[0]!.consume('fresh', spec, clock.now()));
    assert.ok(burst.every((answer) => answer instanceof Promise), 'credit is one request for a limit of 60 over 3 nodes');
    const settled = await Promise.all(burst);
    assert.ok(settled.every((decision) => decision.allowed), 'settled.every((decision) => decision.allowed)');
    // Once quota arrived, the key is answered at once again.
    await yieldToIo();
    const later = limiters[0]!.consume('fresh', spec, clock.now());
    assert.ok(!(later instanceof Promise), '!(later instanceof Promise)');
  });

  it('a new minute starts a new window; the next minute\'s quota is taken before it starts', async () => {
    const { limiters, clock } = await start(3);
    const spec: LimitSpec = { perMinute: 60, perDay: null };
    const first = await hammer(limiters, 'roll', spec, 120, (i) => i % 3, clock, 1000);
    assert.ok(first.admitted >= 60 && first.admitted <= 63, `first window ${first.admitted}`);
    const refused = first.decisions.at(-1)!;
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.ok(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60, 'refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60');

    // The last second of the minute: a request makes each node take the next minute's first slice.
    clock.toSecond(59_000);
    for (const limiter of limiters) await limiter.consume('roll', spec, clock.now());
    await new Promise((r) => setTimeout(r, 50));
    clock.advance(1500);
    const answers = limiters.map((limiter) => limiter.consume('roll', spec, clock.now()));
    assert.ok(answers.every((answer) => !(answer instanceof Promise) && answer.allowed), 'the new minute admits at once');
    const second = await hammer(limiters, 'roll', spec, 120, (i) => i % 3, clock, 1000);
    const total = second.admitted + 3;
    assert.ok(total >= 60 && total <= 63, `second window ${total}`);
  });

  it('the day window binds across minutes', async () => {
    const { limiters, clock } = await start(3);
    const spec: LimitSpec = { perMinute: 1000, perDay: 150 };
    const minuteOne = await hammer(limiters, 'daily', spec, 100, (i) => i % 3, clock, 500);
    assert.equal(minuteOne.admitted, 100);
    clock.advance(60_000);
    const minuteTwo = await hammer(limiters, 'daily', spec, 200, (i) => i % 3, clock, 1500);
    const total = minuteOne.admitted + minuteTwo.admitted;
    assert.ok(total >= 150 && total <= 150 + 1 + 3, `day total ${total}`);
    const last = minuteTwo.decisions.at(-1)!;
    assert.equal(last.window, 'day');
    assert.equal(last.allowed, false);
  });

  it('names the day on every answer of two nodes when the day binds (1,000 a day at 60 a minute)', async () => {
    const { limiters, clock } = await start(2);
    awayFromMidnight(clock, 30 * 60_000);
    const spec: LimitSpec = { perMinute: 60, perDay: 1000 };
    const decisions: LimitDecision[] = [];
    for (let i = 0; i < 40; i++) {
      decisions.push(await limiters[i % 2]!.consume('paced', spec, clock.now()));
      await yieldToIo();
    }
    const named = decisions.map((d) => `${d.window}/${d.limit}`);
    assert.ok(named.every((name) => name === 'day/1000'), named.join(' '));
    assert.ok(decisions.every((d) => d.allowed && d.remaining <= 1000 - 1 && d.remaining >= 1000 - 40 - 40), decisions.map((d) => d.remaining).join(','));
  });

  it('reports falling remaining counts, and counts every admission in Redis exactly', async () => {
    const { limiters, clock } = await start(2);
    // A day the minute's limit cannot spend (60 × 1,440 = 86,400): the minute binds.
    const spec: LimitSpec = { perMinute: 60, perDay: 100_000 };
    const decisions: LimitDecision[] = [];
    for (let i = 0; i < 30; i++) {
      decisions.push(await limiters[i % 2]!.consume('headers', spec, clock.now()));
      await yieldToIo();
    }
    assert.ok(decisions.every((d) => d.allowed && d.window === 'minute' && d.limit === 60), 'decisions.every((d) => d.allowed && d.window === \'minute\' && d.limit === 60)');
    const remaining = decisions.map((d) => d.remaining);
    assert.ok(remaining.at(-1)! <= 60 - 30 + 2 && remaining.at(-1)! >= 60 - 30 - 20, `remaining ${remaining.join(',')}`);
    // Hand every unused slice back: the counters then hold exactly what was admitted.
    await Promise.all(limiters.map((limiter) => limiter.close()));
    const raw = new Redis(url);
    try {
      const minuteEnds = clock.now() - (clock.now() % 60_000) + 60_000;
      await eventually(async () => Number(await raw.get(`${prefix}rl:headers:m:${minuteEnds}`)) === 30, 2000);
    } finally {
      raw.disconnect();
    }
  });

  describe('on a Redis of its own, counting commands', () => {
    let server: OwnRedis;
    before(async () => {
      server = await OwnRedis.create();
      await server.start();
    });
    after(() => server.stop());

    it('a quiet key costs about one exchange per node per minute, not one per request', async () => {
      prefix = randomPrefix();
      nodes = await cluster(server.url, prefix, 3);
      const { limiters, clock } = nodes;
      const spec: LimitSpec = { perMinute: 60, perDay: 10_000 };
      const keys = Array.from({ length: 100 }, (_, i) => `quiet-${i}`);
      let requests = 0;
      for (let round = 0; round < 12; round++) {
        for (const [k, key] of keys.entries()) {
          const answer = await limiters[(round + k) % 3]!.consume(key, spec, clock.now());
          assert.ok(answer.allowed, 'answer.allowed');
          requests++;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      const raw = new Redis(server.url);
      const stats = await raw.info('commandstats');
      raw.disconnect();
      // Exchanges that ran: calls less those refused (NOSCRIPT before the script is loaded).
      const calls = [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+),.*?rejected_calls=(\d+),failed_calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]) - Number(m[2]) - Number(m[3]), 0);
      assert.ok(calls > 0 && calls <= keys.length * 3 * 1.5, `${calls} exchanges for ${requests} requests of ${keys.length} keys`);
    });
  });
});
