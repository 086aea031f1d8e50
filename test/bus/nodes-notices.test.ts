import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { MemorySnapshotBus } from '../../src/bus/memory.js';
import { SoleNode } from '../../src/bus/nodes.js';
import { LocalNotices, type NoticeKind } from '../../src/bus/notices.js';
import { RedisNodeRegistry } from '../../src/bus/redis-nodes.js';
import { RedisNotices } from '../../src/bus/redis-notices.js';
import type { SharedSnapshot } from '../../src/bus/snapshot-bus.js';
import { eventually } from '../support/env.js';
import { openLink, randomPrefix, REDIS_URL, removePrefix, silent } from '../support/redis.js';
import { needs } from '../support/services.js';

describe('in-process twins', () => {
  it('the memory bus hands each snapshot over with a growing version', async () => {
    const errors: unknown[] = [];
    const bus = new MemorySnapshotBus((error) => errors.push(error));
    const got: number[] = [];
    bus.subscribe(() => {
      throw new Error('a broken listener');
    });
    bus.subscribe((shared) => got.push(shared.snapshot.version));
    const shared = { snapshot: { version: 0, builtAt: 1, rates: new Map(), lastUpdate: null, counts: { ok: 0, stale: 0, unavailable: 0 } }, health: [], lastKnown: new Map(), leader: 'x' } satisfies SharedSnapshot;
    await bus.publish(shared);
    await bus.publish(shared);
    assert.deepEqual(got, [1, 2]);
    assert.equal(bus.latest()!.snapshot.version, 2);
    assert.equal(errors.length, 2, 'the broken listener is reported, the others still served');
  });

  it('the sole node lists itself; local notices reach listeners at once', async () => {
    const node = new SoleNode('n1', () => ({ role: 'all', leader: true, version: 4 }));
    assert.equal(node.count(), 1);
    assert.deepEqual(
      node.nodes().map(({ id, role, leader, version }) => ({ id, role, leader, version })),
      [{ id: 'n1', role: 'all', leader: true, version: 4 }],
    );
    const notices = new LocalNotices();
    const heard: NoticeKind[] = [];
    notices.onNotice((kind) => heard.push(kind));
    await notices.notify('keys');
    assert.deepEqual(heard, ['keys']);
  });
});

describe('Redis node registry and change notices', needs('redis'), () => {
  const url = REDIS_URL!;
  let prefix: string;
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await removePrefix(url, prefix);
  });

  function link() {
    const opened = openLink(url, prefix);
    closers.push(() => opened.close());
    return opened;
  }

  it('lists live nodes with what each says of itself, and forgets one that stops', { timeout: 12_000 }, async () => {
    prefix = randomPrefix();
    const a = new RedisNodeRegistry(link(), 'a', () => ({ role: 'ingest', leader: true, version: 10 }), silent);
    const bLink = link();
    const b = new RedisNodeRegistry(bLink, 'b', () => ({ role: 'api', leader: false, version: null }), silent);
    const c = new RedisNodeRegistry(link(), 'c', () => ({ role: 'api', leader: false, version: 9 }), silent);
    closers.push(() => a.close(), () => b.close(), () => c.close());
    await Promise.all([a.start(), b.start(), c.start()]);
    await eventually(() => a.count() === 3, 3000);
    const listed = a.nodes();
    assert.deepEqual(
      listed.map(({ id, role, leader, version }) => ({ id, role, leader, version })),
      [
        { id: 'a', role: 'ingest', leader: true, version: 10 },
        { id: 'b', role: 'api', leader: false, version: null },
        { id: 'c', role: 'api', leader: false, version: 9 },
      ],
    );
    for (const node of listed) assert.ok(Math.abs(node.last_seen - Date.now()) < 5000, 'last_seen is a recent epoch ms');

    await c.close();
    await eventually(() => a.count() === 2, 2500);
    // b loses its connection without leaving (as a killed process would): it drops out once its heartbeat is 5 s old.
    await bLink.close();
    const silentSince = Date.now();
    await eventually(() => a.count() === 1, 8000, 100);
    const gone = Date.now() - silentSince;
    assert.ok(gone >= 3500, `b dropped after ${gone} ms, before its entry expired`);
    assert.deepEqual(a.nodes().map((n) => n.id), ['a']);
  });

  it('a notice reaches every node, the sender included, within 500 ms', async () => {
    prefix = randomPrefix();
    const sender = new RedisNotices(link(), silent);
    const receiver = new RedisNotices(link(), silent);
    const heard: { who: string; kind: NoticeKind; after: number }[] = [];
    await Promise.all([sender.start(), receiver.start()]);
    const sentAt = Date.now();
    sender.onNotice((kind) => heard.push({ who: 'sender', kind, after: Date.now() - sentAt }));
    receiver.onNotice((kind) => heard.push({ who: 'receiver', kind, after: Date.now() - sentAt }));
    await sender.notify('keys');
    await eventually(() => heard.length === 2, 1000, 5);
    assert.deepEqual(heard.map((h) => h.kind), ['keys', 'keys']);
    for (const h of heard) assert.ok(h.after < 500, `${h.who} heard it after ${h.after} ms`);
  });

  it('a short-lived process (the admin command) can announce right after connecting', async () => {
    prefix = randomPrefix();
    const receiver = new RedisNotices(link(), silent);
    await receiver.start();
    const heard: NoticeKind[] = [];
    receiver.onNotice((kind) => heard.push(kind));
    const cli = new RedisNotices(link(), silent);
    await cli.notify('accounts');
    await eventually(() => heard.length === 1, 1000, 5);
    assert.deepEqual(heard, ['accounts']);
  });
});
