/**
 * The Redis-backed stream cap, as two nodes hold it: the count is shared,
 * a release frees a slot everywhere, and a dead node's slots expire.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { RedisStreamSlots, SLOT_TTL_MS } from '../../src/stream/redis-slots.js';
import { openLink, randomPrefix, removePrefix, REDIS_URL } from '../support/redis.js';
import { needs } from '../support/services.js';

describe('stream slots in Redis', needs('redis'), () => {
  const prefix = randomPrefix();
  const clock = new ManualClock(Date.now());
  const links = [openLink(REDIS_URL!, prefix), openLink(REDIS_URL!, prefix)];
  const [one, two] = links.map((link) => new RedisStreamSlots(link, clock, 60_000)) as [RedisStreamSlots, RedisStreamSlots];
  after(async () => {
    await one.close();
    await two.close();
    await removePrefix(REDIS_URL!, prefix);
    for (const link of links) await link.close();
  });

  it('counts an account across nodes, frees on release, and expires a dead node', async () => {
    for (const link of links) assert.ok(await link.whenReady(5000), 'await link.whenReady(5000)');
    assert.equal(await one.acquire('acct', 's1', 2), true);
    assert.equal(await two.acquire('acct', 's2', 2), true);
    assert.equal(await two.acquire('acct', 's3', 2), false, 'the third stream, on either node, is refused');
    assert.equal(await one.acquire('other', 's4', 2), true, 'other accounts are counted apart');
    two.release('acct', 's2');
    // The release goes out on the second node's connection without being awaited; Redis answers a connection's
    // commands in order, so once a ping sent after it on that connection is answered, the release is done.
    assert.equal(await links[1]!.client.ping(), 'PONG');
    assert.equal(await one.acquire('acct', 's5', 2), true, 'a released slot is free on every node');
    clock.advance(SLOT_TTL_MS + 1);
    assert.equal(await two.acquire('acct', 's6', 2), true, 'slots not renewed in time have expired');
  });
});
