import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RedisLink } from '../../src/bus/link.js';
import type { NoticeKind } from '../../src/bus/notices.js';
import { RedisSnapshotBus } from '../../src/bus/redis.js';
import { RedisLeaderLease } from '../../src/bus/redis-lease.js';
import { RedisNodeRegistry } from '../../src/bus/redis-nodes.js';
import { RedisNotices } from '../../src/bus/redis-notices.js';
import { eventually } from '../support/env.js';
import { openLink, OwnRedis, randomPrefix, silent } from '../support/redis.js';
import { needs } from '../support/services.js';
import { realEngine, time } from './fixture.js';
import { HANG_MS } from '../support/deadline.js';

interface Node {
  link: RedisLink;
  lease: RedisLeaderLease;
  bus: RedisSnapshotBus;
  registry: RedisNodeRegistry;
  notices: RedisNotices;
  versions: number[];
  heard: NoticeKind[];
}

/**
 * Every bus part of two nodes against a Redis of the test's own: unreachable
 * at start, then up, then gone, then back empty (a restart without
 * persistence). Nothing may throw or reject, and everything must recover.
 */
describe('bus parts through a Redis outage', needs('redis'), () => {
  let server: OwnRedis;
  let fixture: Awaited<ReturnType<typeof realEngine>>;
  const nodes: Node[] = [];
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);

  before(async () => {
    server = await OwnRedis.create();
    fixture = await realEngine();
    process.on('unhandledRejection', onRejection);
  });
  after(async () => {
    for (const node of nodes) {
      await node.bus.close();
      await node.notices.close();
      await node.registry.close();
      await node.lease.close();
      await node.link.close();
    }
    process.off('unhandledRejection', onRejection);
    await server.stop();
    fixture.close();
  });

  const leaders = () => nodes.filter((node) => node.lease.isLeader);

  it('starts with Redis unreachable: nothing fails, nothing is healthy', async () => {
    const prefix = randomPrefix();
    const started = Date.now();
    for (const id of ['a', 'b']) {
      const link = openLink(server.url, prefix);
      const lease = new RedisLeaderLease(link, { id, logger: silent });
      const node: Node = {
        link,
        lease,
        bus: new RedisSnapshotBus(link, { time, logger: silent, lease }),
        registry: new RedisNodeRegistry(link, id, () => ({ role: 'all', leader: lease.isLeader, version: node.bus.latest()?.snapshot.version ?? null }), silent),
        notices: new RedisNotices(link, silent),
        versions: [],
        heard: [],
      };
      node.bus.subscribe((shared) => node.versions.push(shared.snapshot.version));
      node.notices.onNotice((kind) => node.heard.push(kind));
      await Promise.all([node.lease.start(), node.bus.start(), node.registry.start(), node.notices.start()]);
      nodes.push(node);
    }
    assert.ok(Date.now() - started < HANG_MS, 'start does not wait for Redis');
    for (const node of nodes) {
      assert.equal(node.link.state, 'down');
      assert.ok(!node.bus.healthy && !node.lease.healthy && !node.registry.healthy && !node.notices.healthy, '!node.bus.healthy && !node.lease.healthy && !node.registry.healthy && !node.notices.healthy');
      assert.equal(node.lease.isLeader, false);
      assert.equal(node.bus.latest(), null);
      assert.equal(await node.bus.publish(fixture.shared()), null);
      await node.notices.notify('keys');
    }
  });

  it('comes up by itself once Redis is reachable', { timeout: 15_000 }, async () => {
    await server.start();
    await eventually(() => nodes.every((node) => node.link.healthy) && leaders().length === 1, 5000);
    const [leader] = leaders();
    await eventually(() => nodes.every((node) => node.registry.count() === 2), 3000);
    const published = await leader!.bus.publish(fixture.shared());
    assert.ok(published, 'published');
    await eventually(() => nodes.every((node) => node.versions.at(-1) === published.snapshot.version), 2000);
    await nodes[0]!.notices.notify('plans');
    await eventually(() => nodes.every((node) => node.heard.includes('plans')), 2000);
  });

  it('Redis gone: every node keeps its snapshot and last node list, says so, and the leader steps down', { timeout: 15_000 }, async () => {
    const before = nodes.map((node) => node.bus.latest()!.snapshot.version);
    await server.stop();
    await eventually(() => nodes.every((node) => !node.bus.healthy && !node.registry.healthy), 3000);
    assert.deepEqual(nodes.map((node) => node.bus.latest()!.snapshot.version), before, 'still serving the latest snapshot');
    assert.ok(nodes.every((node) => node.registry.count() === 2), 'the last known node count stays for limit shares');
    assert.equal(await leaders()[0]!.bus.publish(fixture.shared()), null);
    await nodes[1]!.notices.notify('keys');
    await eventually(() => leaders().length === 0, 6000, 100);
  });

  it('Redis back, empty: a leader again, and versions go on growing from where they were', { timeout: 15_000 }, async () => {
    const highest = Math.max(...nodes.map((node) => node.bus.latest()!.snapshot.version));
    await server.start();
    await eventually(() => nodes.every((node) => node.link.healthy) && leaders().length === 1, 5000);
    const published = await leaders()[0]!.bus.publish(fixture.shared());
    assert.ok(published, 'published');
    assert.ok(published.snapshot.version > highest, `version ${published.snapshot.version} after ${highest}`);
    await eventually(() => nodes.every((node) => node.versions.at(-1) === published.snapshot.version), 2000);
    for (const node of nodes) assert.deepEqual(node.versions, [...node.versions].sort((a, b) => a - b), 'never backwards');
    await eventually(() => nodes.every((node) => node.registry.healthy && node.registry.count() === 2), 3000);
    assert.deepEqual(rejections, [], 'no unhandled rejection through it all');
  });
});
