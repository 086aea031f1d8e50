/**
 * Webhooks across two real `nerkh serve` nodes on one PostgreSQL database
 * (created and dropped here) and Redis (a key prefix of its own): only the
 * ingest leader evaluates and sends, so each crossing reaches the receiver
 * exactly once; a leader killed (SIGKILL) with a delivery still failing
 * leaves it to the other node, which takes the lease, sends it under the same
 * webhook-id, does not fire the crossing again, and goes on with the next.
 *
 * Needs `npm run build` first, NERKH_TEST_DATABASE_URL and NERKH_TEST_REDIS_URL.
 * Run alone: node --import tsx --test test/e2e/webhooks-failover.test.ts
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeRaw } from '../support/env.js';
import { needs } from '../support/services.js';
import { Cluster, leaderAmong } from './cluster.js';
import { assertBuilt, cliOk, get, pollUntil, type ServerProcess } from './helpers.js';
import { webhookMarks } from './webhook-marks.js';
import { WebhookReceiver, type Received } from './webhook-receiver.js';

const services = needs('postgres', 'redis');
if (!services.skip) assertBuilt();

interface Status {
  nodes: { id: string; leader: boolean }[];
}

describe('webhooks on two nodes with a leader killed', services, () => {
  const cluster = new Cluster('hooks', { NERKH_WEBHOOK_TIME_SCALE: '0.01' });
  const { nodes } = cluster;
  const sourcePath = join(cluster.dir.path, 'alpha.json');
  const receiver = new WebhookReceiver();
  let key = '';

  const cli = (...args: string[]) => cliOk({ ...process.env, ...cluster.env('cli') }, args);
  const write = (value: string) => writeRaw(sourcePath, `{"updated_at":"${new Date().toISOString()}","items":{"ir_fx_free_usd":${value}}}`);
  const status = async (node: ServerProcess) => (await get(node.base, '/v1/status', key)).json as Status;
  const delivered = (requests: Received[]) => requests.filter((r) => r.answered === 200);
  const waitFor = (done: (list: Received[]) => boolean, timeoutMs: number) =>
    pollUntil(async () => receiver.on('/a'), done, timeoutMs, 50, (list) => JSON.stringify(list.map((r) => [r.id, r.answered])));
  /** The marker endpoint's rules: each fires on the snapshot a check needs (webhook-marks.ts). */
  const MARK = { below: 'usd_free<1000500', above: 'usd_free>1000650', higher: 'usd_free>1000750', highest: 'usd_free>1000805' };
  const { marked, drained } = webhookMarks(receiver, '/m', cli);
  const served = (node: ServerProcess, value: number) =>
    pollUntil(() => get(node.base, '/v1/rates/usd_free', key), (r) => (r.json as { rates?: { value: number }[] }).rates?.[0]?.value === value, 8000, 50, (r) => r.text.slice(0, 300));

  before(async () => {
    await cluster.createDatabase();
    await receiver.start();
    writeFileSync(cluster.configPath, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 120, poll_seconds: 0.2 }], webhooks: { allow_private: true } }));
    write('1000000');
    await cluster.start('a', 'b');
    await cli('accounts', 'add', 'alice', '--plan', 'enterprise');
    key = (JSON.parse((await cli('keys', 'issue', 'alice', '--json')).stdout) as { key: string }).key;
    const added = JSON.parse((await cli('webhooks', 'add', 'alice', receiver.url('/a'), '--rule', 'usd_free>1000500', '--json')).stdout) as { secret: string };
    receiver.expect('/a', added.secret);
    await cli('accounts', 'add', 'mark', '--plan', 'enterprise');
    const mark = JSON.parse((await cli('webhooks', 'add', 'mark', receiver.url('/m'), ...Object.values(MARK).flatMap((rule) => ['--rule', rule]), '--json')).stdout) as { secret: string };
    receiver.expect('/m', mark.secret);
  });

  after(async () => {
    await cluster.close();
    await receiver.close();
  });

  it('one delivery per crossing from two nodes, also across a SIGKILL of the leader with a delivery pending', async () => {
    const { value: shown } = await pollUntil(() => status(nodes[0]!), (s) => s?.nodes?.length === 2 && leaderAmong(s.nodes, nodes) !== undefined, 10_000, 100);
    const leader = leaderAmong(shown.nodes, nodes)!;
    const follower = nodes.find((node) => node !== leader)!;
    // The endpoints were added after the nodes started: the leader loads them within a second; the marker, added
    // after /a, firing on 1000000 says /a is loaded.
    await marked(MARK.below, 1000000);

    // Crossing 1: one delivery, though two nodes see every snapshot.
    write('1000600');
    await waitFor((list) => list.length >= 1, 5000);
    // A later snapshot on which /a's rule still holds: evaluated and sent by the leader, and served by the follower.
    write('1000660');
    await marked(MARK.above, 1000660);
    await served(follower, 1000660);
    assert.deepEqual(receiver.on('/a').map((r) => r.answered), [200]);

    // Crossing 2 while the endpoint fails; the leader dies with the delivery pending.
    receiver.fixedStatus('/a', 503);
    write('1000400');
    await marked(MARK.below, 1000400);
    write('1000700');
    const { value: failing } = await waitFor((list) => list.length >= 2, 5000);
    const pendingId = failing[1]!.id;
    assert.equal(failing[1]!.answered, 503);
    await leader.stop('SIGKILL');
    nodes.splice(nodes.indexOf(leader), 1);
    receiver.fixedStatus('/a', null);
    await pollUntil(() => status(follower), (s) => s.nodes.some((n) => n.leader && n.id.includes(`-${follower.child.pid}-`)), 12_000, 100);
    await waitFor((list) => delivered(list).length >= 2, 15_000);
    // The new leader evaluates a later snapshot (with the states it took over) on which /a's rule still holds.
    write('1000760');
    await marked(MARK.higher, 1000760);
    await drained('alice', '/a');
    const afterTakeover = receiver.on('/a');
    assert.deepEqual(delivered(afterTakeover).map((r) => r.id), [afterTakeover[0]!.id, pendingId], 'the pending delivery, sent by the new leader under its id');
    assert.equal(new Set(afterTakeover.map((r) => r.id)).size, 2, 'the crossing that still holds is not fired again by the new leader');

    // Crossing 3, from the new leader alone.
    write('1000300');
    await marked(MARK.below, 1000300);
    write('1000800');
    await waitFor((list) => delivered(list).length >= 3, 5000);
    write('1000810');
    await marked(MARK.highest, 1000810);
    await drained('alice', '/a');
    const all = receiver.on('/a');
    for (const request of all) assert.equal(request.verifyError, null, `${request.id}: ${request.verifyError}`);
    const ids = delivered(all).map((r) => r.id);
    assert.equal(ids.length, 3, JSON.stringify(all.map((r) => [r.id, r.answered])));
    assert.equal(new Set(ids).size, 3, 'three crossings, three deliveries, each once');
    assert.deepEqual(
      delivered(all).map((r) => r.event?.data.value),
      [1000600, 1000700, 1000800],
    );
    assert.deepEqual(new Set(all.map((r) => r.id)).size, 3, 'no other delivery was ever attempted');
  });
});
