/**
 * The webhook tables on SQLite and PostgreSQL: endpoints, states changed by
 * compare-and-set with their deliveries in one transaction, the epoch fence,
 * the outbox as the sender reads and records it, disabling after a failing
 * streak, the log.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { WebhookFenceError, type DueDelivery, type StateChange } from '../../src/store/webhook-repository.js';
import { tempDir } from '../support/env.js';
import { dialects } from '../support/harness.js';

const HOUR = 3_600_000;

for (const dialect of dialects()) {
  describe(`webhook store (${dialect.name})`, dialect.options, () => {
    const dir = tempDir('nerkh-hooks-store-');
    let store: Store;
    let accountId: string;
    let other: string;
    let endpointId: string;

    before(async () => {
      store = await Store.open({ databaseUrl: dialect.databaseUrl, dataDir: dir.path, schema: dialect.databaseUrl ? `nerkh_t_hooks_${process.pid}_${randomInt(1e9)}` : undefined });
      accountId = (await store.accounts.create('hooked', 'pro')).id;
      other = (await store.accounts.create('other', 'pro')).id;
    });
    after(async () => {
      await store?.close({ dropSchema: true });
      dir.cleanup();
    });

    it('adds, lists (no secret), counts and removes endpoints per account; each change moves the revision', async () => {
      const revision = await store.accounts.revision();
      const made = await store.webhooks.create({ id: 'wh_a', accountId, url: 'https://a.example/hook', secret: 'whsec_c2VjcmV0', rules: ['usd_free>1'], events: ['stale'] }, 1000);
      await store.webhooks.create({ id: 'wh_b', accountId, url: 'https://b.example/hook', secret: 'whsec_c2VjcmV0', rules: [], events: ['stale', 'recovered'] }, 2000);
      assert.equal(await store.accounts.revision(), revision + 2);
      assert.deepEqual(made, { id: 'wh_a', account_id: accountId, url: 'https://a.example/hook', rules: ['usd_free>1'], events: ['stale'], state: 'enabled', failing_since: null, disabled_reason: null, created_at: 1000, updated_at: 1000, superseded: 0, dropped: 0 });
      const listed = await store.webhooks.list(accountId);
      assert.deepEqual(listed.map((e) => e.id), ['wh_a', 'wh_b']);
      assert.ok(listed.every((e) => !('secret' in e)), 'a listed endpoint carries no secret');
      assert.equal(await store.webhooks.count(accountId), 2);
      assert.equal(await store.webhooks.count(other), 0);
      assert.equal(await store.webhooks.remove(other, 'wh_b'), false, 'not another account’s');
      assert.equal(await store.webhooks.remove(accountId, 'wh_b'), true);
      assert.equal(await store.webhooks.remove(accountId, 'wh_b'), false);
      const watched = await store.webhooks.watched();
      assert.deepEqual(watched.map((w) => [w.endpoint.id, w.account.username, w.account.plan]), [['wh_a', 'hooked', 'pro']]);
      endpointId = 'wh_a';
    });

    it('applies state changes by compare-and-set, queuing each delivery only with its change', async () => {
      const message = (id: string) => ({ id, type: 'rate.alert', body: `{"n":"${id}"}` });
      const fire: StateChange = { endpointId, subject: 'rule:usd_free>1', from: null, to: 'fired', since: 10, message: message('msg_1') };
      assert.deepEqual(await store.webhooks.apply([fire], null, 100), []);
      // The same change again (another writer with an old view): refused, and its delivery not queued.
      assert.deepEqual(await store.webhooks.apply([{ ...fire, message: message('msg_2') }], null, 100), [0]);
      assert.equal(await store.webhooks.delivery('msg_2'), null);
      assert.deepEqual(await store.webhooks.states(), [{ endpoint_id: endpointId, subject: 'rule:usd_free>1', state: 'fired', since: 10 }]);
      // Re-armed (the row removed), then a pending staleness moving on with its delivery.
      const changes: StateChange[] = [
        { endpointId, subject: 'rule:usd_free>1', from: 'fired', to: null, since: 20 },
        { endpointId, subject: 'stale:usd_free', from: null, to: 'pending', since: 20 },
        { endpointId, subject: 'stale:gold_18k', from: 'pending', to: 'stale', since: 5, message: message('msg_3') },
      ];
      assert.deepEqual(await store.webhooks.apply(changes, null, 100), [2], 'gold_18k was not pending: skipped');
      assert.equal(await store.webhooks.delivery('msg_3'), null);
      assert.deepEqual(await store.webhooks.states(), [{ endpoint_id: endpointId, subject: 'stale:usd_free', state: 'pending', since: 20 }]);
      const queued = await store.webhooks.delivery('msg_1');
      assert.deepEqual(queued, { id: 'msg_1', endpoint_id: endpointId, subject: 'rule:usd_free>1', type: 'rate.alert', body: '{"n":"msg_1"}', created_at: 100, attempts: 0, next_attempt_at: 100, state: 'pending', finished_at: null });
    });

    it('fences state writes by leader epoch: an older epoch is refused whole once a newer one has claimed', async () => {
      await store.webhooks.claimFence(7);
      assert.equal(await store.webhooks.fence(), 7);
      const change: StateChange = { endpointId, subject: 'rule:x', from: null, to: 'fired', since: 1, message: { id: 'msg_fenced', type: 'rate.alert', body: '{}' } };
      await assert.rejects(store.webhooks.apply([change], 6, 100), (error: unknown) => error instanceof WebhookFenceError && error.fence === 7 && error.epoch === 6);
      assert.equal(await store.webhooks.delivery('msg_fenced'), null, 'nothing of the refused batch was written');
      await assert.rejects(store.webhooks.claimFence(5), WebhookFenceError);
      assert.deepEqual(await store.webhooks.apply([change], 7, 100), []);
      assert.equal(await store.webhooks.fence(), 7);
      assert.ok(await store.webhooks.delivery('msg_fenced'), 'await store.webhooks.delivery(\'msg_fenced\')');
    });

    it('hands out due deliveries, records attempts, gives up, and disables an endpoint failing for long enough', async () => {
      let due = await store.webhooks.due(100, 10);
      assert.deepEqual(due.map((d) => d.id).sort(), ['msg_1', 'msg_fenced']);
      assert.equal(due[0]!.secret, 'whsec_c2VjcmV0', 'the sender gets the secret to sign with');
      assert.equal(await store.webhooks.nextDue(), 100);
      const first = due.find((d) => d.id === 'msg_1')!;
      // A failure: retried later; the endpoint starts failing.
      await store.webhooks.record({ delivery: first, at: 200, attempt: 1, status_code: 500, error: 'HTTP 500', duration_ms: 12.4, outcome: 'retrying', next_attempt_at: 5200, disable_after_ms: 72 * HOUR });
      assert.deepEqual(
        (await store.webhooks.due(300, 10)).map((d) => d.id),
        ['msg_fenced'],
      );
      assert.equal((await store.webhooks.list(accountId))[0]!.failing_since, 200);
      due = await store.webhooks.due(5200, 10);
      const again = due.find((d) => d.id === 'msg_1')!;
      assert.equal(again.attempts, 1);
      // Delivered: done, and the failing streak ends.
      await store.webhooks.record({ delivery: again, at: 5300, attempt: 2, status_code: 204, error: null, duration_ms: 3, outcome: 'delivered', disable_after_ms: 72 * HOUR });
      assert.equal((await store.webhooks.delivery('msg_1'))!.state, 'delivered');
      assert.equal((await store.webhooks.list(accountId))[0]!.failing_since, null);
      // Given up after its window.
      const fenced = due.find((d) => d.id === 'msg_fenced')!;
      await store.webhooks.record({ delivery: fenced, at: 6000, attempt: 1, status_code: null, error: 'connection refused', duration_ms: 1, outcome: 'given_up', disable_after_ms: 72 * HOUR });
      assert.equal((await store.webhooks.delivery('msg_fenced'))!.state, 'failed');
      assert.equal(await store.webhooks.nextDue(), null);

      // Failing since 6000: a streak that reaches the limit (1.5 s here) disables the endpoint, drops what it still had queued, and says so in the log.
      await store.webhooks.apply([{ endpointId, subject: 'rule:y', from: null, to: 'fired', since: 1, message: { id: 'msg_late', type: 'rate.alert', body: '{}' } }], null, 7000);
      const late: DueDelivery = (await store.webhooks.due(7000, 10))[0]!;
      assert.deepEqual(await store.webhooks.record({ delivery: late, at: 7000, attempt: 1, status_code: 503, error: 'HTTP 503', duration_ms: 12.4, outcome: 'retrying', next_attempt_at: 8000, disable_after_ms: 1500 }), { disabled: false });
      const revision = await store.accounts.revision();
      const retried = (await store.webhooks.due(8000, 10))[0]!;
      assert.deepEqual(await store.webhooks.record({ delivery: retried, at: 8000, attempt: 2, status_code: 503, error: 'HTTP 503', duration_ms: 2, outcome: 'retrying', next_attempt_at: 9000, disable_after_ms: 1500 }), { disabled: true });
      assert.equal(await store.accounts.revision(), revision + 1, 'the leader hears of it');
      const [endpoint] = await store.webhooks.list(accountId);
      assert.equal(endpoint!.state, 'disabled');
      assert.match(endpoint!.disabled_reason!, /every attempt failed since/);
      assert.equal((await store.webhooks.delivery('msg_late'))!.state, 'failed');
      assert.deepEqual(await store.webhooks.due(100_000, 10), [], 'nothing is sent to a disabled endpoint');
      assert.deepEqual(await store.webhooks.watched(), [], 'nor evaluated');
      assert.deepEqual(await store.webhooks.states(), []);

      // All within one minute: one entry per outcome, with its count and the latest event's details.
      const log = await store.webhooks.log(accountId);
      assert.deepEqual(
        log.map((line) => [line.at, line.message_id, line.attempt, line.status_code, line.outcome, line.count]),
        [
          [8000, null, null, null, 'disabled', 1],
          [8000, 'msg_late', 2, 503, 'given_up', 2],
          [7000, 'msg_late', 1, 503, 'retrying', 2],
          [5300, 'msg_1', 2, 204, 'delivered', 1],
        ],
      );
      assert.equal(log.find((line) => line.outcome === 'retrying')!.duration_ms, 12);
      assert.deepEqual(await store.webhooks.log(other), []);

      assert.equal(await store.webhooks.enable(accountId, endpointId, 9000), true);
      assert.deepEqual((await store.webhooks.list(accountId)).map((e) => [e.state, e.failing_since, e.disabled_reason]), [['enabled', null, null]]);
    });

    it('prunes finished deliveries after a week and log lines after 30 days', async () => {
      const day = 86_400_000;
      await store.webhooks.prune(8 * day);
      assert.equal(await store.webhooks.delivery('msg_1'), null);
      assert.equal((await store.webhooks.log(accountId)).length, 4, 'the log keeps 30 days');
      await store.webhooks.prune(31 * day);
      assert.deepEqual(await store.webhooks.log(accountId), []);
    });
  });
}
