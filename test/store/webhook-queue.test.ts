/**
 * The outbox as a fair, bounded queue, on SQLite and PostgreSQL: due
 * deliveries are taken round-robin across accounts and endpoints (a dead
 * endpoint's pile of overdue retries never comes before another endpoint's
 * first delivery), a newer event about the same rule replaces an undelivered
 * older one, an endpoint never holds more than the cap, and what was replaced
 * or dropped is counted on the endpoint and in its log, which folds repeats
 * per endpoint, outcome and minute.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import type { DueDelivery, StateChange } from '../../src/store/webhook-repository.js';
import { tempDir } from '../support/env.js';
import { dialects } from '../support/harness.js';

const HOUR = 3_600_000;
const MINUTE = 60_000;

for (const dialect of dialects()) {
  describe(`webhook queue (${dialect.name})`, dialect.options, () => {
    const dir = tempDir('nerkh-hooks-queue-');
    let store: Store;
    let busy: string;
    let calm: string;

    const fire = (endpointId: string, subject: string, id: string, rearm = false): StateChange[] => [
      ...(rearm ? [{ endpointId, subject, from: 'fired', to: null, since: 0 }] : []),
      { endpointId, subject, from: null, to: 'fired', since: 0, message: { id, type: 'rate.alert', body: `{"id":"${id}"}` } },
    ];
    const failed = (delivery: DueDelivery, at: number, next: number) =>
      store.webhooks.record({ delivery, at, attempt: delivery.attempts + 1, status_code: 503, error: 'HTTP 503', duration_ms: 1, outcome: 'retrying', next_attempt_at: next, disable_after_ms: 72 * HOUR });

    before(async () => {
      store = await Store.open({ databaseUrl: dialect.databaseUrl, dataDir: dir.path, schema: dialect.databaseUrl ? `nerkh_t_queue_${process.pid}_${randomInt(1e9)}` : undefined });
      busy = (await store.accounts.create('busy', 'enterprise')).id;
      calm = (await store.accounts.create('calm', 'pro')).id;
      for (const id of ['wh_dead1', 'wh_dead2', 'wh_alive']) await store.webhooks.create({ id, accountId: busy, url: `https://busy.example/${id}`, secret: 'whsec_c2VjcmV0', rules: [], events: ['stale'] });
      await store.webhooks.create({ id: 'wh_fresh', accountId: calm, url: 'https://calm.example/hook', secret: 'whsec_c2VjcmV0', rules: [], events: ['stale'] });
    });
    after(async () => {
      await store?.close({ dropSchema: true });
      dir.cleanup();
    });

    it('takes due deliveries round-robin: a fresh endpoint of another account is in the first round, ahead of a dead endpoint’s overdue retries', async () => {
      // Two dead endpoints with 12 overdue retries each (due since 1,000), both failing.
      for (const endpoint of ['wh_dead1', 'wh_dead2']) {
        for (let i = 0; i < 12; i++) await store.webhooks.apply(fire(endpoint, `rule:r${i}`, `msg_${endpoint}_${i}`), null, 1000 + i);
      }
      for (const delivery of await store.webhooks.due(2000, 100)) await failed(delivery, 2000, 3000);
      // Long after: a first delivery for the other account's endpoint, and one for the busy account's healthy endpoint.
      await store.webhooks.apply(fire('wh_fresh', 'rule:f', 'msg_fresh'), null, 9000);
      await store.webhooks.apply(fire('wh_alive', 'rule:a', 'msg_alive'), null, 9500);

      const first = await store.webhooks.due(10_000, 4);
      const shown = JSON.stringify(first.map((d) => [d.id, d.failing]));
      // Round one: each account's first turn (the busy account's goes to its healthy endpoint before its failing ones).
      assert.deepEqual(first.slice(0, 2).map((d) => d.id).sort(), ['msg_alive', 'msg_fresh'], shown);
      // Then the busy account's other endpoints, one each: never two from one dead endpoint before every endpoint had one.
      assert.deepEqual(first.slice(2).map((d) => d.endpoint_id).sort(), ['wh_dead1', 'wh_dead2'], shown);
      assert.deepEqual(first.map((d) => d.failing), [false, false, true, true], shown);

      const many = await store.webhooks.due(10_000, 100);
      assert.equal(many.length, 26);
      const at = (id: string) => many.findIndex((d) => d.id === id);
      assert.ok(at('msg_fresh') < 2, `the fresh endpoint's first delivery is taken in the first round: at ${at('msg_fresh')}`);
      // Within one account, its endpoints take turns.
      const dead = many.filter((d) => d.failing).map((d) => d.endpoint_id);
      for (let i = 0; i + 1 < dead.length; i += 2) assert.notEqual(dead[i], dead[i + 1], `two turns in a row for one endpoint at ${i}: ${dead.join(' ')}`);
    });

    it('leaves out what the sender cannot start: deliveries under way, full endpoints and accounts, failing endpoints', async () => {
      const ids = async (skip: Parameters<Store['webhooks']['due']>[2]) => (await store.webhooks.due(10_000, 100, skip)).map((d) => d.id);
      assert.deepEqual(await ids({ accounts: [busy] }), ['msg_fresh']);
      assert.deepEqual(new Set(await ids({ failing: true })), new Set(['msg_fresh', 'msg_alive']));
      const withoutDead1 = await store.webhooks.due(10_000, 100, { endpoints: ['wh_dead1'], deliveries: ['msg_fresh'] });
      assert.ok(withoutDead1.every((d) => d.endpoint_id !== 'wh_dead1' && d.id !== 'msg_fresh'), 'withoutDead1.every((d) => d.endpoint_id !== \'wh_dead1\' && d.id !== \'msg_fresh\')');
      assert.equal(withoutDead1.length, 13);
      assert.equal(await store.webhooks.nextDue({ failing: true, accounts: [calm] }), 9500);
      assert.equal(await store.webhooks.nextDue({ failing: true, accounts: [calm, busy] }), null);
    });

    it('a newer event about the same rule replaces an undelivered one, taking over its retry schedule; counted and logged', async () => {
      const [queued] = await store.webhooks.due(10_000, 1, { accounts: [busy] });
      assert.equal(queued!.id, 'msg_fresh');
      await failed(queued!, 10_000, 15_000);
      // The rule re-arms and fires again before the retry: one delivery waits, the newer one, due when the older was.
      await store.webhooks.apply(fire('wh_fresh', 'rule:f', 'msg_fresh2', true), null, 11_000);
      assert.equal(await store.webhooks.delivery('msg_fresh'), null);
      const newer = await store.webhooks.delivery('msg_fresh2');
      assert.deepEqual([newer?.state, newer?.attempts, Number(newer?.next_attempt_at), Number(newer?.created_at)], ['pending', 1, 15_000, 11_000]);
      // Another rule's event replaces nothing.
      await store.webhooks.apply(fire('wh_fresh', 'rule:g', 'msg_other'), null, 11_500);
      assert.deepEqual(Object.fromEntries(await store.webhooks.pendingByEndpoint(calm)), { wh_fresh: 2 });
      const [endpoint] = await store.webhooks.list(calm);
      assert.deepEqual([endpoint!.superseded, endpoint!.dropped], [1, 0]);
      const log = await store.webhooks.log(calm);
      const superseded = log.find((line) => line.outcome === 'superseded');
      assert.deepEqual([superseded?.message_id, superseded?.count, superseded?.at], ['msg_fresh', 1, 11_000], JSON.stringify(log));
    });

    it('an endpoint holds at most the cap: the oldest pending deliveries are dropped, counted and logged', async () => {
      const cap = 5;
      for (let i = 0; i < 8; i++) await store.webhooks.apply(fire('wh_dead1', `rule:cap${i}`, `msg_cap${i}`), null, 20_000 + i, cap);
      assert.equal((await store.webhooks.pendingByEndpoint(busy)).get('wh_dead1'), cap);
      // The newest stay.
      for (let i = 3; i < 8; i++) assert.equal((await store.webhooks.delivery(`msg_cap${i}`))?.state, 'pending', `msg_cap${i}`);
      assert.equal(await store.webhooks.delivery('msg_cap0'), null);
      const dead1 = (await store.webhooks.list(busy)).find((e) => e.id === 'wh_dead1')!;
      assert.equal(dead1.dropped, 12 + 3, 'its 12 older deliveries and the first three of these');
      const dropped = (await store.webhooks.log(busy)).filter((line) => line.outcome === 'dropped' && line.endpoint_id === 'wh_dead1');
      assert.deepEqual(dropped.map((line) => line.count), [15], 'all in one minute: one entry');
      assert.match(dropped[0]!.error!, /more than 5 deliveries were waiting/);
    });

    it('folds the log per endpoint, outcome and minute, keeping the latest details', async () => {
      const base = 10 * MINUTE;
      const delivered = async (id: string, at: number) => {
        await store.webhooks.apply(fire('wh_alive', `rule:${id}`, id), null, at);
        const delivery = (await store.webhooks.due(at, 100, { failing: true, accounts: [calm] })).find((d) => d.id === id)!;
        await store.webhooks.record({ delivery, at, attempt: 1, status_code: 200, error: null, duration_ms: at % 100, outcome: 'delivered', disable_after_ms: 72 * HOUR });
      };
      await delivered('msg_m1', base + 10);
      await delivered('msg_m2', base + 50_000);
      await delivered('msg_m3', base + MINUTE + 5);
      const lines = (await store.webhooks.log(busy)).filter((line) => line.endpoint_id === 'wh_alive' && line.outcome === 'delivered');
      assert.deepEqual(
        lines.map((line) => [line.at, line.message_id, line.count, line.duration_ms]),
        [
          [base + MINUTE + 5, 'msg_m3', 1, 5],
          [base + 50_000, 'msg_m2', 2, 0],
        ],
      );
    });
  });
}
