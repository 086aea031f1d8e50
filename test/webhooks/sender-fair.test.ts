/**
 * The sender against a real store (SQLite) and real receivers on 127.0.0.1:
 * ten endpoints of one account that take requests and never answer (as a
 * receiver that hangs does, until the 10 s timeout) cannot hold every slot.
 * Another account's endpoint, and a healthy endpoint of the same account once
 * the dead ones are known to fail, get their deliveries while every attempt
 * to the dead ones is still hanging. Time is a ManualClock that stands still,
 * so no retry falls due while the test runs; the attempt timeout is long, so
 * no hanging attempt ends before the test lets it.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Store } from '../../src/store/store.js';
import { newSecret } from '../../src/webhooks/events.js';
import { webhookTimings } from '../../src/webhooks/schedule.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { eventually, tempDir } from '../support/env.js';
import { silent } from '../support/redis.js';

const DEAD_ENDPOINTS = 10;
const QUEUED_EACH = 5;
/** Longer than any test here: an attempt to a dead endpoint ends only when the test drops its connection. */
const timings = { ...webhookTimings(1), timeoutMs: 120_000 };

/** A receiver that answers 200 on `/ok…` paths and holds every other request open; it records the webhook-id of each. */
class Receivers {
  readonly answered: string[] = [];
  readonly hanging: { path: string; id: string; response: ServerResponse }[] = [];
  private server!: Server;

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      const id = String(request.headers['webhook-id']);
      if (request.url?.startsWith('/ok')) {
        this.answered.push(id);
        response.writeHead(200).end();
      } else this.hanging.push({ path: request.url ?? '', id, response });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Hanging requests whose attempts are still open. */
  open(): number {
    return this.hanging.filter((h) => !h.response.writableEnded && !h.response.destroyed).length;
  }

  /** Let every hanging attempt fail (its connection dropped). */
  dropHanging(): void {
    for (const h of this.hanging.splice(0)) h.response.destroy();
  }

  async close(): Promise<void> {
    this.dropHanging();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('webhook sender: a dead account cannot starve the others', () => {
  const receivers = new Receivers();
  const clock = new ManualClock();
  const time = new ZoneTime('Asia/Tehran', clock);
  let dir: ReturnType<typeof tempDir>;
  let store: Store;
  let sender: WebhookSender | null = null;
  let queued = 0;

  const queue = async (endpointId: string) => {
    const id = `msg_${endpointId}_${++queued}`;
    await store.webhooks.apply([{ endpointId, subject: `rule:n${queued}`, from: null, to: 'fired', since: clock.now(), message: { id, type: 'rate.alert', body: `{"n":${queued}}` } }], null, clock.now());
    return id;
  };
  /** An account with ten endpoints that hang and QUEUED_EACH deliveries waiting for each. */
  const deadAccount = async (username: string) => {
    const accountId = (await store.accounts.create(username, 'enterprise')).id;
    const dead: string[] = [];
    for (let i = 0; i < DEAD_ENDPOINTS; i++) {
      const id = `wh_${username}${i}`;
      await store.webhooks.create({ id, accountId, url: receivers.url(`/dead/${i}`), secret: newSecret(), rules: ['usd_free>1'], events: [] });
      for (let n = 0; n < QUEUED_EACH; n++) await queue(id);
      dead.push(id);
    }
    return { accountId, dead };
  };
  const startSender = () => {
    sender = new WebhookSender({ webhooks: store.webhooks, time, logger: silent, timings, allowPrivate: true });
    sender.start();
    return sender;
  };

  before(() => receivers.start());
  after(() => receivers.close());

  const open = async () => {
    dir = tempDir('nerkh-sender-fair-');
    store = await Store.open({ databaseUrl: null, dataDir: dir.path });
  };
  afterEach(async () => {
    receivers.dropHanging();
    await sender?.stop();
    sender = null;
    await store?.close();
    dir?.cleanup();
  });

  it("another account's first delivery goes out while every slot the dead account may hold hangs", async () => {
    await open();
    await deadAccount('dead');
    const calm = (await store.accounts.create('calm', 'pro')).id;
    await store.webhooks.create({ id: 'wh_calm', accountId: calm, url: receivers.url('/ok/calm'), secret: newSecret(), rules: ['usd_free>1'], events: [] });
    const s = startSender();
    // The dead account takes what it may (half the slots), all hanging.
    await eventually(() => receivers.open() >= 8, 10_000);
    const id = await queue('wh_calm');
    s.wake();
    await eventually(() => receivers.answered.includes(id), 10_000);
    assert.equal(receivers.hanging.length, receivers.open(), 'no attempt to a dead endpoint had ended');
    assert.ok(receivers.open() <= 8, `the dead account held ${receivers.open()} slots`);
  });

  it("a healthy endpoint of the same account is served while its failing endpoints' retries hang", async () => {
    await open();
    const { accountId, dead } = await deadAccount('failing');
    // Each dead endpoint has failed once already: its deliveries are overdue retries, and it is failing.
    for (const delivery of await store.webhooks.due(clock.now(), 1000)) {
      await store.webhooks.record({ delivery, at: clock.now() - 1, attempt: 1, status_code: null, error: 'timed out after 10 s', duration_ms: 10_000, outcome: 'retrying', next_attempt_at: clock.now(), disable_after_ms: timings.disableAfterMs });
    }
    assert.ok((await store.webhooks.list(accountId)).every((e) => e.failing_since !== null), '(await store.webhooks.list(accountId)).every((e) => e.failing_since !== null)');
    await store.webhooks.create({ id: 'wh_alive', accountId, url: receivers.url('/ok/alive'), secret: newSecret(), rules: ['usd_free>1'], events: [] });
    const s = startSender();
    await eventually(() => receivers.open() >= 1, 10_000);
    const id = await queue('wh_alive');
    s.wake();
    await eventually(() => receivers.answered.includes(id), 10_000);
    assert.equal(receivers.hanging.length, receivers.open(), 'no attempt to a dead endpoint had ended');
    // Failing endpoints get one attempt each, and a quarter of the slots between them.
    const perPath = new Map<string, number>();
    for (const h of receivers.hanging) perPath.set(h.path, (perPath.get(h.path) ?? 0) + 1);
    assert.ok([...perPath.values()].every((n) => n === 1), JSON.stringify([...perPath]));
    assert.ok(receivers.open() <= 4, `failing endpoints held ${receivers.open()} slots`);
    assert.equal(dead.length, DEAD_ENDPOINTS);
  });
});
