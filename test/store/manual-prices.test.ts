/**
 * Manual prices in the real store, SQLite and PostgreSQL alike: a set
 * replaces the current price and is logged, a clear removes it and is logged,
 * the revision moves with every change (and only then), and values keep their
 * digits exactly.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';
import { dialects } from '../support/harness.js';

for (const dialect of dialects()) {
  describe(`manual prices in the store (${dialect.name})`, dialect.options, () => {
    const dir = tempDir('nerkh-manual-store-');
    let store: Store;
    before(async () => {
      store = await Store.open({ databaseUrl: dialect.databaseUrl, dataDir: dir.path, schema: dialect.databaseUrl ? `nerkh_t_manual_${process.pid}_${randomInt(1e9)}` : undefined });
    });
    after(async () => {
      await store?.close({ dropSchema: true });
      dir.cleanup();
    });

    it('sets, replaces and clears a price, logging every change and moving the revision with each', async () => {
      const prices = store.manualPrices;
      assert.deepEqual(await prices.current(), []);
      assert.equal(await prices.lastChange('desk'), null);
      const r0 = await prices.revision();

      // More digits than a double holds: kept as text.
      await prices.set('desk', 'gold_18k', { value: '123456789012345678.125', expiresAt: 2_000_000_000_000, note: 'from the phone' }, 1_700_000_000_000);
      const r1 = await prices.revision();
      assert.ok(r1 > r0, 'r1 > r0');
      assert.deepEqual(await prices.current('desk'), [{ source: 'desk', reference: 'gold_18k', value: '123456789012345678.125', set_at: 1_700_000_000_000, expires_at: 2_000_000_000_000, note: 'from the phone' }]);

      await prices.set('desk', 'gold_18k', { value: '71.250', expiresAt: null, note: null }, 1_700_000_001_000);
      await prices.set('other', 'usd_free', { value: '1000000', expiresAt: null, note: null }, 1_700_000_002_000);
      const r2 = await prices.revision();
      assert.ok(r2 > r1, 'r2 > r1');
      assert.deepEqual(
        (await prices.current()).map((p) => [p.source, p.reference, p.value, p.set_at, p.expires_at, p.note]),
        [
          ['desk', 'gold_18k', '71.250', 1_700_000_001_000, null, null],
          ['other', 'usd_free', '1000000', 1_700_000_002_000, null, null],
        ],
      );
      assert.equal((await prices.current('desk')).length, 1);

      assert.equal(await prices.clear('desk', 'gold_18k', 'feed is back', 1_700_000_003_000), true);
      const r3 = await prices.revision();
      assert.ok(r3 > r2, 'r3 > r2');
      // Clearing what is not there changes nothing, logs nothing.
      assert.equal(await prices.clear('desk', 'gold_18k', null, 1_700_000_004_000), false);
      assert.equal(await prices.revision(), r3);
      assert.deepEqual(await prices.current('desk'), []);
      assert.equal(await prices.lastChange('desk'), 1_700_000_003_000);

      const log = await prices.log({ source: 'desk' });
      assert.deepEqual(
        log.map((c) => [c.action, c.reference, c.value, c.expires_at, c.note, c.at]),
        [
          ['clear', 'gold_18k', null, null, 'feed is back', 1_700_000_003_000],
          ['set', 'gold_18k', '71.250', null, null, 1_700_000_001_000],
          ['set', 'gold_18k', '123456789012345678.125', 2_000_000_000_000, 'from the phone', 1_700_000_000_000],
        ],
      );
      assert.deepEqual(
        (await prices.log({ reference: 'usd_free' })).map((c) => [c.source, c.action, c.value]),
        [['other', 'set', '1000000']],
      );
      assert.equal((await prices.log()).length, 4);
      assert.equal((await prices.log({ limit: 2 })).length, 2);
    });
  });
}
