import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { FailedAttempts } from '../../src/access/failed-attempts.js';
import { SharedFailedAttempts } from '../../src/access/shared-failed-attempts.js';
import type { RedisLink } from '../../src/bus/link.js';
import { openLink, OwnRedis, randomPrefix, REDIS_URL, removePrefix } from '../support/redis.js';
import { eventually } from '../support/env.js';
import { needs } from '../support/services.js';
import { TestClock } from './limiter-helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `total` failures from one address, alternating over the throttles, `gapMs` apart; how many were answered 401 (not yet throttled). */
async function fail(throttles: { record(address: string, now: number): number }[], address: string, total: number, gapMs: number, clock: TestClock): Promise<number> {
  let unthrottled = 0;
  for (let i = 0; i < total; i++) {
    if (throttles[i % throttles.length]!.record(address, clock.now()) === 0) unthrottled++;
    await sleep(gapMs);
  }
  return unthrottled;
}

describe('failed-key throttle', () => {
  it('in process: 30 failures a minute per address, then a wait until the minute ends', () => {
    const throttle = new FailedAttempts();
    const start = 1_700_000_000_000 - (1_700_000_000_000 % 60_000) + 10_000;
    for (let i = 0; i < 30; i++) assert.equal(throttle.record('a', start), 0);
    assert.equal(throttle.record('a', start), 50);
    assert.equal(throttle.record('b', start), 0, 'another address is unaffected');
    assert.equal(throttle.record('a', start + 50_000), 0, 'a new minute');
  });
});

describe('shared failed-key throttle', needs('redis'), () => {
  const url = REDIS_URL!;
  let prefix: string;
  const links: RedisLink[] = [];
  const throttles: SharedFailedAttempts[] = [];

  afterEach(async () => {
    await Promise.all(throttles.splice(0).map((throttle) => throttle.close()));
    await Promise.all(links.splice(0).map((link) => link.close()));
    await removePrefix(url, prefix);
  });

  /** The nodes' clock: real time, begun a second into a minute, so each test's failures count in one minute. */
  let clock: TestClock;

  async function nodes(count: number, redisUrl = url): Promise<SharedFailedAttempts[]> {
    prefix = randomPrefix();
    clock = new TestClock();
    for (let i = 0; i < count; i++) {
      const link = openLink(redisUrl, prefix);
      links.push(link);
      throttles.push(new SharedFailedAttempts(link, undefined, clock));
      await link.settled();
    }
    return throttles;
  }

  it('an address failing on two nodes is throttled after about 30 in all, not 30 on each', async () => {
    const [a, b] = await nodes(2);
    const unthrottled = await fail([a!, b!], '198.51.100.7', 60, 15, clock);
    assert.ok(unthrottled >= 30 && unthrottled <= 36, `${unthrottled} failures answered before the throttle`);
    assert.ok(a!.record('198.51.100.7', clock.now()) > 0 && b!.record('198.51.100.7', clock.now()) > 0, 'both nodes throttle now');
    assert.equal(a!.record('198.51.100.8', clock.now()), 0, 'another address is unaffected');
  });

  describe('with Redis unreachable', () => {
    let server: OwnRedis;
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

    it('each node throttles on its own count, and shares again when Redis is back', async () => {
      const [a, b] = await nodes(2, server.url);
      assert.equal(await fail([a!], '203.0.113.9', 30, 0, clock), 30);
      assert.ok(a!.record('203.0.113.9', clock.now()) > 0, 'node a counted alone');
      assert.equal(b!.record('203.0.113.9', clock.now()), 0, 'node b knows nothing of it');

      await server.start();
      await Promise.all(links.map((link) => link.whenReady(5000)));
      // Node a sends what it counted alone with its next flush, node b learns the shared total with its own:
      // b throttles well before its own count could (30 failures).
      let own = 0;
      await eventually(() => {
        own++;
        return b!.record('203.0.113.9', clock.now()) > 0;
      });
      assert.ok(own < 30, `node b throttled after ${own} failures of its own: the counts were shared`);
      assert.deepEqual(rejections, []);
    });
  });
});
