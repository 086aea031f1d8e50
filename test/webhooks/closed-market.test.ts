/**
 * `rate.stale` webhooks follow the market calendar: the producer, over a real
 * SQLite store, fed snapshots as the engine builds them, never reports a
 * reference stale while its market is closed, and reports it once the market
 * is open and it is still stale.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { buildPlans } from '../../src/domain/plan.js';
import { NO_DAY_FIELDS, type MarketField, type Rate } from '../../src/domain/rate.js';
import { ZoneTime } from '../../src/domain/time.js';
import { ManualClock } from '../../src/domain/clock.js';
import { prepareRate } from '../../src/live/prepare.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { Store } from '../../src/store/store.js';
import { newSecret } from '../../src/webhooks/events.js';
import { WebhookProducer } from '../../src/webhooks/producer.js';
import { webhookTimings } from '../../src/webhooks/schedule.js';
import { catalogueWithoutBands, tempDir } from '../support/env.js';

const FRIDAY_NOON = Date.parse('2026-11-20T12:00:00+03:30');
const CLOSED: MarketField = { name: 'tehran', state: 'closed', reason: 'Friday', reason_fa: 'جمعه', opens_at: Date.parse('2026-11-21T00:00:00+03:30') };
const OPEN: MarketField = { name: 'tehran', state: 'open', reason: null, reason_fa: null, opens_at: null };

describe('stale webhooks and the market calendar', () => {
  const dir = tempDir('nerkh-hooks-closed-');
  const clock = new ManualClock(FRIDAY_NOON);
  const time = new ZoneTime('Asia/Tehran', clock);
  let store: Store;
  let catalogue: Catalogue;
  let producer: WebhookProducer;
  let version = 0;

  /** A snapshot serving usd_free stale (updated Thursday), in its market's state. */
  const snapshot = (market: MarketField): Snapshot => {
    const rate: Rate = { key: 'usd_free', title: 'دلار', unit: 'ریال/دلار', currency: 'IRR', per: 'unit', source_key: 'ir_fx_free_usd', value: '1000000', updated_at: FRIDAY_NOON - 13 * 3_600_000, status: 'stale', source: 'alpha', stale_seconds: 3600, ...NO_DAY_FIELDS, market };
    const rates = new Map<string, PreparedRate>([['usd_free', prepareRate(rate, time)]]);
    return { version: ++version, builtAt: clock.now(), rates, lastUpdate: rate.updated_at, counts: { ok: 0, stale: 1, unavailable: 0 } };
  };
  /** Wait for the producer to finish what it was given (its drain is private: read for the test only). */
  const idle = async () => {
    for (let i = 0; i < 100; i++) {
      const draining = (producer as unknown as { draining: Promise<void> | null }).draining;
      if (!draining) return;
      await draining;
    }
  };
  const outbox = async () => (await store.connection.db.selectFrom('webhook_outbox').select(['subject']).execute()).map((row) => row.subject);
  const states = async () => (await store.connection.db.selectFrom('webhook_alert_states').select(['subject', 'state']).execute()).map((row) => `${row.subject} ${row.state}`);

  before(async () => {
    catalogue = catalogueWithoutBands();
    store = await Store.open({ databaseUrl: null, dataDir: dir.path });
    const account = await store.accounts.create('watcher', 'enterprise');
    await store.webhooks.create({ id: 'wh_closed00000001', accountId: account.id, url: 'https://hooks.invalid/x', secret: newSecret(), rules: [], events: ['stale', 'recovered'] });
    // Stale is reported as soon as it has lasted (no 5-minute wait).
    const timings = { ...webhookTimings(), staleAfterMs: 0 };
    producer = new WebhookProducer({
      webhooks: store.webhooks,
      revision: () => store.accounts.revision(),
      catalogue,
      plans: buildPlans(catalogue.popular),
      time,
      logger: pino({ level: 'silent' }),
      timings,
      epoch: null,
      onQueued: () => {},
      onFenced: () => {},
    });
    await producer.start();
  });
  after(async () => {
    await producer.stop();
    await store.close();
    dir.cleanup();
  });

  it('queues no rate.stale while the market is closed, however long, and one once it is open and still stale', async () => {
    producer.snapshot(snapshot(CLOSED));
    await idle();
    clock.advance(3_600_000);
    producer.snapshot(snapshot(CLOSED));
    await idle();
    assert.deepEqual(await outbox(), [], 'nothing queued while closed');
    assert.deepEqual(await states(), [], 'not even pending');
    // Open (Saturday 01:00) and still stale: pending from the opening, then reported.
    clock.set(Date.parse('2026-11-21T01:00:00+03:30'));
    producer.snapshot(snapshot(OPEN));
    await idle();
    assert.deepEqual(await states(), ['stale:usd_free pending']);
    clock.advance(1000);
    producer.snapshot(snapshot(OPEN));
    await idle();
    assert.deepEqual(await outbox(), ['stale:usd_free']);
  });
});
