import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { SoleLeader } from '../../src/bus/lease.js';
import type { RedisLink } from '../../src/bus/link.js';
import { RedisSnapshotBus } from '../../src/bus/redis.js';
import { RedisLeaderLease, type Schedule } from '../../src/bus/redis-lease.js';
import { eventually } from '../support/env.js';
import { openLink, randomPrefix, REDIS_URL, removePrefix, silent } from '../support/redis.js';
import { needs } from '../support/services.js';
import { realEngine, time } from './fixture.js';

/** A schedule a test can freeze: the node stops renewing yet still believes it leads, as a paused process would. */
function freezable(): { schedule: Schedule; freeze: () => void } {
  let frozen = false;
  return {
    schedule: (tick, everyMs) => {
      const timer = setInterval(() => frozen || tick(), everyMs);
      return { stop: () => clearInterval(timer) };
    },
    freeze: () => (frozen = true),
  };
}

describe('SoleLeader (embedded)', () => {
  it('always leads, with its own id', async () => {
    const lease = new SoleLeader('solo');
    await lease.start();
    assert.equal(lease.isLeader, true);
    assert.equal(lease.leaderId, 'solo');
    assert.ok(lease.token, 'lease.token');
  });
});

describe('Redis leader lease', needs('redis'), () => {
  const url = REDIS_URL!;
  let prefix: string;
  let fixture: Awaited<ReturnType<typeof realEngine>>;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    fixture = await realEngine();
  });
  after(() => fixture.close());
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await removePrefix(url, prefix);
  });

  async function contender(id: string, schedule?: Schedule): Promise<{ link: RedisLink; lease: RedisLeaderLease; bus: RedisSnapshotBus; changes: boolean[] }> {
    const link = openLink(url, prefix);
    const lease = new RedisLeaderLease(link, { id, logger: silent, schedule });
    const bus = new RedisSnapshotBus(link, { time, logger: silent, lease });
    const changes: boolean[] = [];
    lease.onChange((isLeader) => changes.push(isLeader));
    closers.push(async () => {
      await bus.close();
      await lease.close();
      await link.close();
    });
    await Promise.all([lease.start(), bus.start()]);
    return { link, lease, bus, changes };
  }

  it('of two contenders exactly one leads, and both name it', async () => {
    prefix = randomPrefix();
    const [a, b] = await Promise.all([contender('a'), contender('b')]);
    const deadline = Date.now() + 2500;
    while (Date.now() < deadline) {
      assert.equal(Number(a.lease.isLeader) + Number(b.lease.isLeader), 1, 'exactly one leader at every moment');
      await new Promise((r) => setTimeout(r, 100));
    }
    const leader = a.lease.isLeader ? a : b;
    const other = leader === a ? b : a;
    assert.equal(leader.lease.leaderId, leader.lease.id);
    assert.equal(other.lease.leaderId, leader.lease.id);
    assert.deepEqual(leader.changes, [true]);
    assert.deepEqual(other.changes, []);
  });

  it('a paused leader is replaced within 6 s, its late publish is refused, and versions never go back', { timeout: 15_000 }, async () => {
    prefix = randomPrefix();
    const clock = freezable();
    const old = await contender('old', clock.schedule);
    assert.ok(old.lease.isLeader, 'the first contender leads');
    const successor = await contender('successor');
    const watcher = await contender('watcher');
    const seen: number[] = [];
    watcher.bus.subscribe((shared) => seen.push(shared.snapshot.version));
    assert.ok(await old.bus.publish(fixture.shared()), 'await old.bus.publish(fixture.shared())');

    clock.freeze();
    const frozenAt = Date.now();
    await eventually(() => successor.lease.isLeader || watcher.lease.isLeader, 7000, 20);
    const tookMs = Date.now() - frozenAt;
    assert.ok(tookMs >= 3500, `took over after ${tookMs} ms, before the lease expired`);
    const next = successor.lease.isLeader ? successor : watcher;
    assert.ok(old.lease.isLeader, 'the frozen node still believes it leads');
    assert.ok(old.lease.token, 'old.lease.token');

    const fresh = await next.bus.publish(fixture.shared());
    assert.ok(fresh, 'the new leader publishes');
    assert.equal(await old.bus.publish(fixture.shared()), null, 'the old leader is fenced off');
    await eventually(() => seen.length === 2);
    assert.ok(seen[1]! > seen[0]!, `versions ${seen.join(', ')}`);
    assert.notEqual(next.lease.token, old.lease.token);
  });

  it('a closing leader hands over at once', async () => {
    prefix = randomPrefix();
    const a = await contender('a');
    const b = await contender('b');
    assert.ok(a.lease.isLeader, 'a.lease.isLeader');
    await a.lease.close();
    assert.deepEqual(a.changes, [true, false]);
    await eventually(() => b.lease.isLeader, 1500, 20);
    assert.equal(b.lease.leaderId, 'b');
  });
});
