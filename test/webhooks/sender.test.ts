/**
 * The sender against a real store (SQLite) and a real receiver on 127.0.0.1,
 * with its durations scaled down (as NERKH_WEBHOOK_TIME_SCALE does) so that
 * 24 hours of retries take under 2 seconds and 3 days about 5: a delivery to
 * an endpoint that keeps failing is given up and logged, and the endpoint is
 * disabled once every attempt has failed for "3 days", saying so in its log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ZoneTime } from '../../src/domain/time.js';
import { Store } from '../../src/store/store.js';
import { webhookTimings } from '../../src/webhooks/schedule.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { newSecret } from '../../src/webhooks/events.js';
import { eventually, tempDir } from '../support/env.js';
import { silent } from '../support/redis.js';
import { WebhookReceiver } from '../e2e/webhook-receiver.js';

const SCALE = 0.00002;

describe('webhook sender: giving up and disabling', () => {
  const dir = tempDir('nerkh-sender-');
  const receiver = new WebhookReceiver();
  const timings = webhookTimings(SCALE);
  let store: Store;
  let sender: WebhookSender;
  let accountId: string;
  let queued = 0;

  const queue = async () => {
    const id = `msg_test${++queued}`;
    await store.webhooks.apply([{ endpointId: 'wh_down', subject: `rule:n${queued}`, from: null, to: 'fired', since: Date.now(), message: { id, type: 'rate.alert', body: `{"n":${queued}}` } }], null, Date.now());
    sender.wake();
    return id;
  };
  /**
   * A delivery to a healthy endpoint of another account, queued now and waited for until it is recorded
   * delivered: the sender has read the outbox and finished what it started since this was called. The positive
   * event the "nothing more" checks are made against, instead of a fixed wait.
   */
  let marks = 0;
  const marker = async () => {
    const id = `msg_mark${++marks}`;
    await store.webhooks.apply([{ endpointId: 'wh_mark', subject: `rule:m${marks}`, from: null, to: 'fired', since: Date.now(), message: { id, type: 'rate.alert', body: `{"m":${marks}}` } }], null, Date.now());
    sender.wake();
    await eventually(async () => (await store.webhooks.delivery(id))?.state === 'delivered', 5000, 20);
  };

  before(async () => {
    await receiver.start();
    store = await Store.open({ databaseUrl: null, dataDir: dir.path });
    accountId = (await store.accounts.create('failing', 'pro')).id;
    const secret = newSecret();
    receiver.expect('/down', secret);
    receiver.fixedStatus('/down', 500);
    await store.webhooks.create({ id: 'wh_down', accountId, url: receiver.url('/down'), secret, rules: ['usd_free>1'], events: [] });
    const markSecret = newSecret();
    receiver.expect('/mark', markSecret);
    await store.webhooks.create({ id: 'wh_mark', accountId: (await store.accounts.create('healthy', 'pro')).id, url: receiver.url('/mark'), secret: markSecret, rules: ['usd_free>1'], events: [] });
    sender = new WebhookSender({ webhooks: store.webhooks, time: new ZoneTime('Asia/Tehran'), logger: silent, timings, allowPrivate: true });
    sender.start();
  });

  after(async () => {
    await sender?.stop();
    await store?.close();
    await receiver.close();
    dir.cleanup();
  });

  it('retries on the schedule for (scaled) 24 hours, then gives the delivery up and logs it', async () => {
    const started = Date.now();
    const id = await queue();
    await eventually(async () => (await store.webhooks.delivery(id))?.state === 'failed', 10_000, 20);
    const took = Date.now() - started;
    assert.ok(took >= timings.retryWindowMs - 100 && took < timings.retryWindowMs + 2000, `given up after ${took} ms (window ${timings.retryWindowMs} ms)`);
    const attempts = receiver.on('/down');
    for (const attempt of attempts) assert.equal(attempt.verifyError, null);
    assert.deepEqual([...new Set(attempts.map((a) => a.id))], [id]);
    // 0, 5 s, 35 s, 2:35, 12:35, 1:12:35, then hourly to 23:12:35: 28 attempts in 24 h. Scaled down, each
    // attempt's own few milliseconds count against 72 ms "hours", so a couple fewer fit.
    assert.ok(attempts.length >= 12 && attempts.length <= 28, `${attempts.length} attempts`);
    // The log folds each minute's attempts of one outcome into one entry with a count.
    const log = await store.webhooks.log(accountId, 1000);
    const counted = (outcome: string) => log.filter((line) => line.outcome === outcome).reduce((sum, line) => sum + line.count, 0);
    assert.deepEqual([counted('retrying'), counted('given_up')], [attempts.length - 1, 1], JSON.stringify(log));
    assert.ok(log.length <= 4, `${log.length} entries for ${attempts.length} attempts`);
    assert.equal(log[0]!.outcome, 'given_up');
    assert.ok(log.every((line) => line.status_code === 500 && line.error === 'HTTP 500'), 'log.every((line) => line.status_code === 500 && line.error === \'HTTP 500\')');
    const [endpoint] = await store.webhooks.list(accountId);
    assert.equal(endpoint!.state, 'enabled', 'not yet failing for 3 days');
    assert.ok(endpoint!.failing_since !== null && Math.abs(endpoint!.failing_since - started) < 1000, 'endpoint!.failing_since !== null && Math.abs(endpoint!.failing_since - started) < 1000');
  });

  it('an endpoint whose every attempt failed for (scaled) 3 days is disabled, says so in its log, and gets nothing more', async () => {
    const since = (await store.webhooks.list(accountId))[0]!.failing_since!;
    // New events keep coming while it fails.
    const ticker = setInterval(() => void queue(), 500);
    try {
      await eventually(async () => (await store.webhooks.list(accountId))[0]!.state === 'disabled', 15_000, 50);
    } finally {
      clearInterval(ticker);
    }
    // Every attempt started before the disabling has ended and been recorded by the time a later one has.
    await marker();
    const [endpoint] = await store.webhooks.list(accountId);
    const log = await store.webhooks.log(accountId, 1000);
    const disabled = log.filter((line) => line.outcome === 'disabled');
    assert.equal(disabled.length, 1);
    assert.match(disabled[0]!.error!, /^disabled: every attempt failed since /);
    assert.equal(endpoint!.disabled_reason, disabled[0]!.error);
    assert.ok(disabled[0]!.at - since >= timings.disableAfterMs, `disabled ${disabled[0]!.at - since} ms after the first failure`);
    // An attempt under way as it was disabled ends there: nothing after the disabling is left to retry.
    assert.ok(log.filter((line) => line.at >= disabled[0]!.at && line.outcome === 'retrying').length === 0, JSON.stringify(log.slice(0, 4)));
    assert.ok((await store.webhooks.due(Date.now() + 86_400_000, 100)).length === 0, 'nothing left due, ever');
    const count = receiver.on('/down').length;
    await queue();
    await marker();
    assert.equal(receiver.on('/down').length, count, 'nothing is sent to a disabled endpoint');

    // Enabled again (`nerkh webhooks enable`), with the endpoint answering: what is queued from then on arrives.
    receiver.fixedStatus('/down', null);
    await store.webhooks.enable(accountId, 'wh_down');
    const id = await queue();
    await eventually(async () => (await store.webhooks.delivery(id))?.state === 'delivered', 5000, 20);
    assert.equal(receiver.on('/down').at(-1)!.id, id);
  });
});
