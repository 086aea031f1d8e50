import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { RedisLink } from '../../src/bus/link.js';
import { RedisSnapshotBus } from '../../src/bus/redis.js';
import { RedisLeaderLease } from '../../src/bus/redis-lease.js';
import type { SharedSnapshot } from '../../src/bus/snapshot-bus.js';
import { encodeSnapshot, withVersion } from '../../src/bus/wire.js';
import type { Logger } from '../../src/log.js';
import { eventually } from '../support/env.js';
import { openLink, randomPrefix, REDIS_URL, removePrefix, silent } from '../support/redis.js';
import { needs } from '../support/services.js';
import { BIG, realEngine, time } from './fixture.js';

describe('Redis snapshot bus', needs('redis'), () => {
  const url = REDIS_URL!;
  let fixture: Awaited<ReturnType<typeof realEngine>>;
  let prefix: string;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    fixture = await realEngine();
  });
  after(() => fixture.close());
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await removePrefix(url, prefix);
  });

  /** One node: its own connection, optionally contending for the lease. */
  async function node(id: string, contend: boolean, logger: Logger = silent): Promise<{ link: RedisLink; bus: RedisSnapshotBus; lease: RedisLeaderLease | undefined; received: SharedSnapshot[] }> {
    const link = openLink(url, prefix);
    const lease = contend ? new RedisLeaderLease(link, { id, logger: silent }) : undefined;
    const bus = new RedisSnapshotBus(link, { time, logger, lease });
    const received: SharedSnapshot[] = [];
    bus.subscribe((shared) => received.push(shared));
    closers.push(async () => {
      await bus.close();
      await lease?.close();
      await link.close();
    });
    await lease?.start();
    await bus.start();
    return { link, bus, lease, received };
  }

  it('delivers each published snapshot to every node, with a version from Redis and the same bytes', async () => {
    prefix = randomPrefix();
    const leader = await node('a', true);
    const follower = await node('b', false);
    assert.ok(leader.lease!.isLeader, 'leader.lease!.isLeader');

    const first = await leader.bus.publish(fixture.shared());
    assert.ok(first, 'published');
    const second = await leader.bus.publish(fixture.shared());
    assert.equal(second!.snapshot.version, first.snapshot.version + 1);
    await eventually(() => follower.received.length === 2);
    assert.deepEqual(
      follower.received.map((s) => s.snapshot.version),
      [first.snapshot.version, second!.snapshot.version],
    );
    assert.deepEqual(leader.received.map((s) => s.snapshot.version), [first.snapshot.version, second!.snapshot.version], 'the leader serves from the bus too');
    const got = follower.bus.latest()!;
    for (const [key, prepared] of fixture.engine.current().rates) assert.equal(got.snapshot.rates.get(key)!.json, prepared.json, key);
    assert.equal(got.snapshot.rates.get('usd_free')!.rate.value, BIG);
    assert.equal(got.leader, 'node-a');
  });

  it('a node that starts later holds the latest snapshot as soon as start() resolves', async () => {
    prefix = randomPrefix();
    const leader = await node('a', true);
    const published = await leader.bus.publish(fixture.shared());
    const late = await node('late', false);
    assert.equal(late.bus.latest()?.snapshot.version, published!.snapshot.version);
    assert.equal(late.received.length, 1);
  });

  it('never hands a subscriber an older or repeated snapshot', async () => {
    prefix = randomPrefix();
    const leader = await node('a', true);
    const follower = await node('b', false);
    await leader.bus.publish(fixture.shared());
    const newest = await leader.bus.publish(fixture.shared());
    await eventually(() => follower.received.length === 2);
    // Someone replays an old message straight onto the channel.
    const raw = new Redis(url);
    try {
      const old = withVersion(newest!.snapshot.version - 1, encodeSnapshot(fixture.shared()));
      await raw.publish(`${prefix}snapshots`, old);
      await raw.publish(`${prefix}snapshots`, withVersion(newest!.snapshot.version, encodeSnapshot(fixture.shared())));
      await raw.publish(`${prefix}snapshots`, 'garbage');
      await raw.publish(`${prefix}snapshots`, withVersion(newest!.snapshot.version + 5, encodeSnapshot(fixture.shared())));
    } finally {
      raw.disconnect();
    }
    await eventually(() => follower.received.length === 3);
    assert.deepEqual(
      follower.received.map((s) => s.snapshot.version),
      [newest!.snapshot.version - 1, newest!.snapshot.version, newest!.snapshot.version + 5],
    );
  });

  it('refuses a snapshot message whose values or statuses fail their check, and keeps serving the last good one', async () => {
    prefix = randomPrefix();
    const lines: { msg: string; err?: string; refused?: number }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const leader = await node('a', true);
    const follower = await node('b', false, logger);
    const good = await leader.bus.publish(fixture.shared());
    await eventually(() => follower.received.length === 1);
    // Newer versions, as a stray writer on the channel (or one holding the password) would send them.
    const wire = JSON.parse(withVersion(good!.snapshot.version + 10, encodeSnapshot(fixture.shared()))) as { rates: { key: string; value: string | null; status: string }[] };
    const usd = wire.rates.find((rate) => rate.key === 'usd_free')!;
    usd.value = '1,"admin":true';
    const injected = JSON.stringify(wire);
    usd.value = '42';
    usd.status = 'ok","evil":"yes';
    const badStatus = JSON.stringify({ ...wire, version: good!.snapshot.version + 11 });
    const raw = new Redis(url);
    try {
      await raw.publish(`${prefix}snapshots`, injected);
      await raw.publish(`${prefix}snapshots`, badStatus);
      // And the same kept as the latest: a node starting now must refuse it too.
      await raw.set(`${prefix}snapshot:latest`, injected);
    } finally {
      raw.disconnect();
    }
    await eventually(() => follower.bus.refused === 2);
    assert.equal(follower.received.length, 1, 'nothing refused was delivered');
    assert.equal(follower.bus.latest()!.snapshot.version, good!.snapshot.version);
    assert.equal(follower.bus.latest()!.snapshot.rates.get('usd_free')!.rate.value, BIG, 'the last good value is still served');
    assert.equal(lines.length, 1, 'logged once, not once per message');
    assert.match(lines[0]!.err!, /rates\[\d+\]\.value is "1,\\"admin\\":true"/);
    assert.equal(lines[0]!.refused, 1);

    const late = await node('late', false);
    assert.equal(late.bus.latest(), null, 'a starting node does not take the refused latest');
    assert.equal(late.bus.refused, 1);
    // The leader's next snapshot is taken by both: refused messages moved no version forward.
    const next = await leader.bus.publish(fixture.shared());
    await eventually(() => follower.received.length === 2 && late.received.length === 1);
    assert.equal(follower.bus.latest()!.snapshot.version, next!.snapshot.version);
  });

  it('refuses to publish for a node that does not hold the lease', async () => {
    prefix = randomPrefix();
    await node('a', true);
    const second = await node('b', true);
    const reader = await node('c', false);
    assert.equal(second.lease!.isLeader, false);
    assert.equal(await second.bus.publish(fixture.shared()), null);
    assert.equal(await reader.bus.publish(fixture.shared()), null);
  });

  it('versions keep growing after Redis forgets its counter (a restart without persistence)', async () => {
    prefix = randomPrefix();
    const leader = await node('a', true);
    for (let i = 0; i < 3; i++) await leader.bus.publish(fixture.shared());
    const before = leader.bus.latest()!.snapshot.version;
    const raw = new Redis(url);
    await raw.del(`${prefix}snapshot:version`);
    raw.disconnect();
    const after = await leader.bus.publish(fixture.shared());
    assert.equal(after!.snapshot.version, before + 1);
  });
});
