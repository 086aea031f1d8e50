/**
 * The sender against a real store (SQLite) and a real slow receiver on
 * 127.0.0.1: an outbox read that started while a delivery's attempt was under
 * way, and returned after that attempt delivered and was recorded, still lists
 * the delivery as due. The sender must not send it a second time.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ZoneTime } from '../../src/domain/time.js';
import type { DueDelivery, WebhookRepository } from '../../src/store/webhook-repository.js';
import { Store } from '../../src/store/store.js';
import { newSecret } from '../../src/webhooks/events.js';
import { webhookTimings } from '../../src/webhooks/schedule.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { eventually, tempDir } from '../support/env.js';
import { silent } from '../support/redis.js';

const ANSWER_AFTER_MS = 300;

describe('webhook sender: one attempt per due delivery', () => {
  const dir = tempDir('nerkh-sender-once-');
  const received: string[] = [];
  let server: Server;
  let store: Store;

  before(async () => {
    // Answers 200, slowly, so the sender reads the outbox again while the attempt is under way.
    server = createServer((request, response) => {
      received.push(String(request.headers['webhook-id']));
      request.resume();
      setTimeout(() => response.writeHead(200).end(), ANSWER_AFTER_MS);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    store = await Store.open({ databaseUrl: null, dataDir: dir.path });
  });

  after(async () => {
    await store?.close();
    await new Promise((resolve) => server.close(resolve));
    dir.cleanup();
  });

  it('does not send again a delivery whose attempt ended while the outbox was being read', async () => {
    const accountId = (await store.accounts.create('slow', 'pro')).id;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await store.webhooks.create({ id: 'wh_slow', accountId, url, secret: newSecret(), rules: ['usd_free>1'], events: [] });
    // Reads of the outbox may be held back until told: a database that answers slowly.
    let hold: Promise<void> | null = null;
    const outbox = Object.create(store.webhooks) as WebhookRepository;
    outbox.due = async (now: number, limit: number): Promise<DueDelivery[]> => {
      const rows = await store.webhooks.due(now, limit);
      if (hold) await hold;
      return rows;
    };
    const sender = new WebhookSender({ webhooks: outbox, time: new ZoneTime('Asia/Tehran'), logger: silent, timings: webhookTimings(0.01), allowPrivate: true });
    try {
      const id = 'msg_once';
      await store.webhooks.apply([{ endpointId: 'wh_slow', subject: 'rule:once', from: null, to: 'fired', since: Date.now(), message: { id, type: 'rate.alert', body: '{"n":1}' } }], null, Date.now());
      sender.start();
      await eventually(() => received.length === 1, 5000, 10);
      // The attempt is under way (its answer comes in 300 ms): a read now sees the delivery pending, and returns after it was delivered.
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      sender.wake();
      await eventually(async () => (await store.webhooks.delivery(id))?.state === 'delivered', 5000, 10);
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      hold = null;
      await new Promise((resolve) => setTimeout(resolve, ANSWER_AFTER_MS + 500));
      assert.deepEqual(received, [id], 'one attempt, delivered once');
    } finally {
      await sender.stop();
    }
  });
});
