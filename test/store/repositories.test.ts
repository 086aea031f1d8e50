import assert from 'node:assert/strict';
import { createHash, randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { AccessDirectory, allowanceFor } from '../../src/access/directory.js';
import { hashKey, KEY_FORMAT } from '../../src/domain/key-material.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { applyOverrides, buildPlans, type Plan } from '../../src/domain/plan.js';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { DuplicateError } from '../../src/store/account-repository.js';
import { connect, type StoreOptions } from '../../src/store/db.js';
import { StaticMigrationProvider } from '../../src/store/migrations.js';
import { Store } from '../../src/store/store.js';
import { ERROR_LOG_DAYS, ERROR_LOG_LIMIT, minuteOf, UsageRepository, type UsageCount, type UsageErrorEntry } from '../../src/store/usage-repository.js';
import { UsageMeter } from '../../src/usage/meter.js';
import { eventually, tempDir } from '../support/env.js';
import { dialects } from '../support/harness.js';

const DAY_MS = 86_400_000;
const MIGRATIONS = ['001_accounts_and_keys', '002_usage', '003_usage_batches', '004_history', '005_history_fence', '006_usage_error_fold', '007_webhooks', '008_manual_prices', '009_webhook_fair_queue', '010_usage_hourly', '011_market_calendar'];
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

interface Opened {
  store: Store;
  options: StoreOptions;
  close(): Promise<void>;
}

/** A store of its own: a temp dir for SQLite, a fresh schema for PostgreSQL; `close` removes both. */
async function openFresh(databaseUrl: string | null): Promise<Opened> {
  const dir = tempDir('nerkh-store-');
  const options: StoreOptions = {
    databaseUrl,
    dataDir: dir.path,
    schema: databaseUrl ? `nerkh_t_store_${process.pid}_${randomInt(1e9)}` : undefined,
  };
  let store: Store;
  try {
    store = await Store.open(options);
  } catch (error) {
    dir.cleanup();
    throw error;
  }
  return {
    store,
    options,
    async close() {
      try {
        await store.close({ dropSchema: true });
      } finally {
        dir.cleanup();
      }
    },
  };
}

function errorEntry(accountId: string, at: number, extra: Partial<UsageErrorEntry> = {}): UsageErrorEntry {
  return { account_id: accountId, key_id: 'key_x', at, service: 'detail', path: '/v1/rates/x', http_status: 404, error: 'NOT_FOUND', count: 1, ...extra };
}

for (const dialect of dialects()) {
  describe(`store repositories (${dialect.name})`, dialect.options, () => {
    describe('migrations', () => {
      let opened: Opened;
      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
      });
      after(() => opened.close());

      const migrationNames = async (store: Store) =>
        (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.connection.db)).rows.map((row) => row.name);

      it('runs every migration once and reports the dialect', async () => {
        assert.equal(opened.store.dialect, dialect.name);
        assert.deepEqual(await migrationNames(opened.store), MIGRATIONS);
        assert.equal(await opened.store.ping(), true);
        assert.equal(await opened.store.accounts.revision(), 0);
        assert.equal(await opened.store.accounts.count(), 0);
      });

      it('is idempotent: opening the same store again keeps data, revision and migration records', async () => {
        await opened.store.accounts.create('kept', 'basic');
        const revision = await opened.store.accounts.revision();
        const again = await Store.open(opened.options);
        try {
          assert.deepEqual(await migrationNames(again), MIGRATIONS);
          const revisionRows = await again.connection.db.selectFrom('store_revision').selectAll().orderBy('id').execute();
          // Row 2 counts changes to the settled history; row 3 is the history's fence (the newest leader epoch that wrote); row 4 the webhook states' fence; row 5 counts manual price changes; row 6 the market calendar's.
          assert.deepEqual(revisionRows, [
            { id: 1, revision },
            { id: 2, revision: 0 },
            { id: 3, revision: 0 },
            { id: 4, revision: 0 },
            { id: 5, revision: 0 },
            { id: 6, revision: 0 },
          ]);
          assert.equal((await again.accounts.find('kept'))?.plan, 'basic');
          assert.equal(await again.accounts.count(), 1);
        } finally {
          await again.close();
        }
        // The first store still works after the second one closed.
        assert.equal(await opened.store.accounts.count(), 1);
      });

      it('folds an error log written one row per failure (006): one entry per account, service, error and minute, every failure counted', async () => {
        const dir = tempDir('nerkh-store-old-');
        const options: StoreOptions = { databaseUrl: dialect.databaseUrl, dataDir: dir.path, schema: dialect.databaseUrl ? `nerkh_t_old_${process.pid}_${randomInt(1e9)}` : undefined };
        // A store as the previous release left it: migrated up to 005, its error log one row per failure.
        const minute = minuteOf(1_800_000_000_000);
        const connection = connect(options);
        try {
          if (options.schema) await sql.raw(`create schema ${options.schema}`).execute(connection.db);
          const migrator = new Migrator({ db: connection.db, provider: new StaticMigrationProvider(connection.dialect), ...(options.schema ? { migrationTableSchema: options.schema } : {}) });
          const { error } = await migrator.migrateTo('005_history_fence');
          assert.equal(error, undefined);
          const old = (account: string, at: number, error: string, path: string, service = 'detail') =>
            sql`insert into usage_errors (account_id, key_id, at, service, path, http_status, error) values (${account}, 'key_old', ${at}, ${service}, ${path}, 429, ${error})`.execute(connection.db);
          for (let i = 0; i < 5; i++) await old('acc_old', minute + 1000 + i, 'RATE_LIMIT_EXCEEDED', `/p${i}`);
          await old('acc_old', minute + 60_000, 'RATE_LIMIT_EXCEEDED', '/next-minute');
          await old('acc_old', minute + 500, 'SERVICE_NOT_ACTIVE', '/other-error');
          await old('acc_old', minute + 600, 'RATE_LIMIT_EXCEEDED', '/other-service', 'catalogue');
          await old('acc_other', minute + 700, 'RATE_LIMIT_EXCEEDED', '/other-account');
        } finally {
          await connection.db.destroy();
        }
        const store = await Store.open(options);
        try {
          const entries = async (account: string) => (await store.usage.errors(account, 0)).map((e) => [e.at - minute, e.service, e.error, e.count, e.path]);
          assert.deepEqual(await entries('acc_old'), [
            [60_000, 'detail', 'RATE_LIMIT_EXCEEDED', 1, '/next-minute'],
            [1004, 'detail', 'RATE_LIMIT_EXCEEDED', 5, '/p4'],
            [600, 'catalogue', 'RATE_LIMIT_EXCEEDED', 1, '/other-service'],
            [500, 'detail', 'SERVICE_NOT_ACTIVE', 1, '/other-error'],
          ]);
          assert.deepEqual(await entries('acc_other'), [[700, 'detail', 'RATE_LIMIT_EXCEEDED', 1, '/other-account']]);
          // The folded rows take further failures of their minute.
          await store.usage.record([], [errorEntry('acc_old', minute + 2000, { service: 'detail', error: 'RATE_LIMIT_EXCEEDED', http_status: 429, count: 10, path: '/new' })]);
          assert.deepEqual((await entries('acc_old'))[1], [2000, 'detail', 'RATE_LIMIT_EXCEEDED', 15, '/new']);
        } finally {
          await store.close({ dropSchema: true });
          dir.cleanup();
        }
      });

      if (dialect.databaseUrl) {
        it('creates its tables in its own schema, not in public', async () => {
          const schema = opened.options.schema!;
          const rows = (
            await sql<{ table_schema: string }>`select table_schema from information_schema.tables where table_name = 'accounts' and table_schema = ${schema}`.execute(
              opened.store.connection.db,
            )
          ).rows;
          assert.deepEqual(rows, [{ table_schema: schema }]);
        });

        it('migrates beside another schema that holds a half-made migration table of its own', async () => {
          // What two stores migrating at the same moment, or one killed mid-way, leave behind.
          const other = `nerkh_t_orphan_${process.pid}_${randomInt(1e9)}`;
          const db = opened.store.connection.db;
          await sql.raw(`create schema ${other}`).execute(db);
          await sql.raw(`create table ${other}.kysely_migration_lock (id varchar(255) primary key, is_locked integer not null default 0)`).execute(db);
          try {
            const fresh = await openFresh(dialect.databaseUrl);
            try {
              assert.deepEqual(await migrationNames(fresh.store), MIGRATIONS);
            } finally {
              await fresh.close();
            }
          } finally {
            await sql.raw(`drop schema ${other} cascade`).execute(db);
          }
        });
      }
    });

    describe('accounts', () => {
      let opened: Opened;
      let store: Store;
      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
        store = opened.store;
      });
      after(() => opened.close());

      it('creates and finds an account; every create bumps the revision by one', async () => {
        const before = await store.accounts.revision();
        const account = await store.accounts.create('zeta-shop', 'basic', 1_700_000_000_000);
        assert.match(account.id, /^acc_[0-9a-f]{16}$/);
        assert.deepEqual(account, {
          id: account.id,
          username: 'zeta-shop',
          plan: 'basic',
          status: 'active',
          references: null,
          origins: null,
          overrides: null,
          created_at: 1_700_000_000_000,
          updated_at: 1_700_000_000_000,
        });
        assert.equal(await store.accounts.revision(), before + 1);
        assert.deepEqual(await store.accounts.find('zeta-shop'), account);
        assert.equal(await store.accounts.find('nobody'), null);
      });

      it('lists accounts sorted by username and counts them', async () => {
        await store.accounts.create('alpha.shop', 'pro');
        await store.accounts.create('mid_shop', 'enterprise');
        const list = await store.accounts.list();
        assert.deepEqual(
          list.map((a) => a.username),
          ['alpha.shop', 'mid_shop', 'zeta-shop'],
        );
        assert.deepEqual(
          list.map((a) => a.plan),
          ['pro', 'enterprise', 'basic'],
        );
        assert.equal(await store.accounts.count(), 3);
        assert.equal(new Set(list.map((a) => a.id)).size, 3);
      });

      it('turns two simultaneous creates of one username into one account and a DuplicateError', async () => {
        const results = await Promise.allSettled([store.accounts.create('race-shop', 'basic'), store.accounts.create('race-shop', 'basic')]);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        assert.ok(failed.reason instanceof DuplicateError, String(failed.reason));
        assert.equal((await store.accounts.list()).filter((a) => a.username === 'race-shop').length, 1);
        await store.connection.db.deleteFrom('accounts').where('username', '=', 'race-shop').execute();
      });

      it('rejects a duplicate username without changing anything', async () => {
        const revision = await store.accounts.revision();
        await assert.rejects(store.accounts.create('zeta-shop', 'pro'), DuplicateError);
        assert.equal(await store.accounts.count(), 3);
        assert.equal((await store.accounts.find('zeta-shop'))?.plan, 'basic');
        assert.equal(await store.accounts.revision(), revision);
      });

      it('updates plan, status, references, origins and overrides, bumping the revision each time', async () => {
        let revision = await store.accounts.revision();
        const step = async (changes: Parameters<Store['accounts']['update']>[1], now: number) => {
          const updated = await store.accounts.update('zeta-shop', changes, now);
          assert.ok(updated, 'updated');
          assert.equal(updated.updated_at, now);
          assert.deepEqual(await store.accounts.find('zeta-shop'), updated);
          const next = await store.accounts.revision();
          assert.equal(next, revision + 1, `revision after ${JSON.stringify(changes)}`);
          revision = next;
          return updated;
        };
        assert.equal((await step({ plan: 'pro' }, 1_700_000_001_000)).plan, 'pro');
        assert.equal((await step({ status: 'suspended' }, 1_700_000_002_000)).status, 'suspended');
        const withLists = await step({ references: ['usd_free', 'coin_emami'], origins: ['https://a.example', 'https://b.example:8443'] }, 1_700_000_003_000);
        assert.deepEqual(withLists.references, ['usd_free', 'coin_emami']);
        assert.deepEqual(withLists.origins, ['https://a.example', 'https://b.example:8443']);
        const withOverrides = await step({ overrides: { requests_per_minute: 100, max_references: null, services: ['catalogue'] } }, 1_700_000_004_000);
        assert.deepEqual(withOverrides.overrides, { requests_per_minute: 100, max_references: null, services: ['catalogue'] });
        // Fields not named are left alone.
        assert.equal(withOverrides.plan, 'pro');
        assert.equal(withOverrides.status, 'suspended');
        assert.deepEqual(withOverrides.references, ['usd_free', 'coin_emami']);
        assert.equal(withOverrides.created_at, 1_700_000_000_000);

        const cleared = await step({ references: null, origins: null, overrides: null, status: 'active' }, 1_700_000_005_000);
        assert.equal(cleared.references, null);
        assert.equal(cleared.origins, null);
        assert.equal(cleared.overrides, null);
        assert.equal(cleared.status, 'active');
        assert.equal(cleared.plan, 'pro');
        // Other accounts untouched.
        assert.equal((await store.accounts.find('alpha.shop'))?.status, 'active');
        assert.equal((await store.accounts.find('alpha.shop'))?.plan, 'pro');
      });

      it('returns null for an update of a missing account, without bumping the revision', async () => {
        const revision = await store.accounts.revision();
        assert.equal(await store.accounts.update('nobody', { plan: 'pro' }), null);
        assert.equal(await store.accounts.find('nobody'), null);
        assert.equal(await store.accounts.revision(), revision);
      });

      it('sorts usernames with punctuation the same way in every dialect (code-point order)', async () => {
        for (const username of ['ab_a', 'abb', 'ab.z', 'ab-c', 'ab9']) await store.accounts.create(username, 'basic');
        const usernames = (await store.accounts.list()).map((a) => a.username);
        assert.deepEqual(usernames, [...usernames].sort());
        assert.deepEqual(
          usernames.filter((u) => u.startsWith('ab')),
          ['ab-c', 'ab.z', 'ab9', 'ab_a', 'abb'],
        );
      });
    });

    describe('keys', () => {
      let opened: Opened;
      let store: Store;
      let accountId: string;
      let otherId: string;
      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
        store = opened.store;
        accountId = (await store.accounts.create('keyed', 'pro')).id;
        otherId = (await store.accounts.create('other', 'basic')).id;
      });
      after(() => opened.close());

      it('issues nrk_ + 32 base62 with a key_ public id, bumping the revision', async () => {
        const revision = await store.accounts.revision();
        const issued = await store.keys.issue(accountId, { label: 'board' }, 1_700_000_000_000);
        assert.match(issued.key, /^nrk_[0-9A-Za-z]{32}$/);
        assert.match(issued.key, KEY_FORMAT);
        assert.match(issued.id, /^key_[0-9A-Za-z]+$/);
        assert.ok(!issued.id.includes(issued.key.slice(4)), '!issued.id.includes(issued.key.slice(4))');
        assert.deepEqual(
          { ...issued, key: undefined },
          { id: issued.id, account_id: accountId, label: 'board', created_at: 1_700_000_000_000, expires_at: null, revoked_at: null, last_used_at: null, key: undefined },
        );
        assert.equal(await store.accounts.revision(), revision + 1);
      });

      it('gives every key and id fresh randomness', async () => {
        const issued = await Promise.all(Array.from({ length: 20 }, () => store.keys.issue(otherId)));
        assert.equal(new Set(issued.map((k) => k.key)).size, 20);
        assert.equal(new Set(issued.map((k) => k.id)).size, 20);
        // 20 × 32 random base62 characters use far more than a handful of symbols.
        assert.ok(new Set(issued.flatMap((k) => [...k.key.slice(4)])).size > 40, 'new Set(issued.flatMap((k) => [...k.key.slice(4)])).size > 40');
      });

      it('stores only the SHA-256 hash: no column holds the key', async () => {
        const issued = await store.keys.issue(accountId, { label: 'hash-check' });
        const rows = await store.connection.db.selectFrom('api_keys').selectAll().where('id', '=', issued.id).execute();
        assert.equal(rows.length, 1);
        const row = rows[0]!;
        assert.equal(row.hash, sha256(issued.key));
        assert.equal(row.hash, hashKey(issued.key));
        assert.match(row.hash, /^[0-9a-f]{64}$/);
        const secret = issued.key.slice(4);
        for (const [column, value] of Object.entries(row)) {
          assert.ok(!String(value).includes(secret), `column ${column} holds the key`);
        }
        // The whole table, too.
        const all = await store.connection.db.selectFrom('api_keys').selectAll().execute();
        assert.ok(all.every((r) => Object.values(r).every((value) => !String(value).includes(secret))), 'all.every((r) => Object.values(r).every((value) => !String(value).includes(secret)))');
      });

      it('rejects a key for an account that does not exist', async () => {
        await assert.rejects(store.keys.issue('acc_missing'));
      });

      it('stores the expiry; list returns every key (revoked and expired too) but never the key or hash', async () => {
        const account = (await store.accounts.create('lister', 'basic')).id;
        const live = await store.keys.issue(account, { label: 'live', expiresAt: 1_900_000_000_000 }, 1_700_000_000_001);
        const expired = await store.keys.issue(account, { expiresAt: 1_600_000_000_000 }, 1_700_000_000_002);
        const revoked = await store.keys.issue(account, {}, 1_700_000_000_003);
        assert.equal(await store.keys.revoke(revoked.id, 1_700_000_000_010), true);

        const list = await store.keys.list(account);
        assert.deepEqual(
          list.map((k) => k.id),
          [live.id, expired.id, revoked.id],
        );
        for (const info of list) {
          assert.ok(!('key' in info), 'list returns the key');
          assert.ok(!('hash' in info), 'list returns the hash');
          const text = JSON.stringify(info);
          for (const issued of [live, expired, revoked]) assert.ok(!text.includes(issued.key.slice(4)), '!text.includes(issued.key.slice(4))');
        }
        assert.equal(list[0]!.expires_at, 1_900_000_000_000);
        assert.equal(list[0]!.label, 'live');
        assert.equal(list[1]!.expires_at, 1_600_000_000_000);
        assert.equal(list[2]!.revoked_at, 1_700_000_000_010);
        assert.deepEqual(await store.keys.find(live.id), list[0]);
        assert.equal(await store.keys.find('key_nothere'), null);
        // Another account's keys are not listed.
        assert.ok((await store.keys.list(otherId)).every((k) => k.account_id === otherId), '(await store.keys.list(otherId)).every((k) => k.account_id === otherId)');
      });

      it('revokes idempotently: true once, then false; the revision moves only the first time', async () => {
        const issued = await store.keys.issue(accountId);
        const revision = await store.accounts.revision();
        assert.equal(await store.keys.revoke(issued.id, 1_700_000_000_500), true);
        assert.equal(await store.accounts.revision(), revision + 1);
        assert.equal(await store.keys.revoke(issued.id, 1_700_000_000_900), false);
        assert.equal(await store.accounts.revision(), revision + 1);
        assert.equal((await store.keys.find(issued.id))?.revoked_at, 1_700_000_000_500, 'a second revoke must not move revoked_at');
        assert.equal(await store.keys.revoke('key_nothere'), false);
        assert.equal(await store.accounts.revision(), revision + 1);
      });

      it('credentials() returns every live key with hash and expiry, never revoked ones', async () => {
        const account = (await store.accounts.create('creds', 'basic')).id;
        const a = await store.keys.issue(account, { expiresAt: 1_900_000_000_000 });
        const b = await store.keys.issue(account);
        const c = await store.keys.issue(account);
        await store.keys.revoke(c.id);
        const credentials = await store.keys.credentials();
        const mine = credentials.filter((cred) => cred.account_id === account).sort((x, y) => x.id.localeCompare(y.id));
        const expected = [
          { id: a.id, account_id: account, hash: sha256(a.key), expires_at: 1_900_000_000_000 },
          { id: b.id, account_id: account, hash: sha256(b.key), expires_at: null },
        ].sort((x, y) => x.id.localeCompare(y.id));
        assert.deepEqual(mine, expected);
        assert.ok(!credentials.some((cred) => cred.id === c.id), '!credentials.some((cred) => cred.id === c.id)');
        const revokedIds = new Set((await store.connection.db.selectFrom('api_keys').select('id').where('revoked_at', 'is not', null).execute()).map((r) => r.id));
        assert.ok(revokedIds.size >= 2, 'revokedIds.size >= 2');
        assert.ok(credentials.every((cred) => !revokedIds.has(cred.id)), 'credentials.every((cred) => !revokedIds.has(cred.id))');
      });

      it('touch() sets last_used_at without bumping the revision', async () => {
        const x = await store.keys.issue(accountId);
        const y = await store.keys.issue(accountId);
        const revision = await store.accounts.revision();
        await store.keys.touch(new Map([[x.id, 1_700_000_123_456]]));
        await store.keys.touch(new Map());
        assert.equal((await store.keys.find(x.id))?.last_used_at, 1_700_000_123_456);
        assert.equal((await store.keys.find(y.id))?.last_used_at, null);
        await store.keys.touch(new Map([[x.id, 1_700_000_200_000], [y.id, 1_700_000_300_000], ['key_gone', 1]]));
        assert.equal((await store.keys.find(x.id))?.last_used_at, 1_700_000_200_000);
        assert.equal((await store.keys.find(y.id))?.last_used_at, 1_700_000_300_000);
        assert.equal(await store.accounts.revision(), revision);
      });
    });

    describe('market calendar', () => {
      let opened: Opened;
      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
      });
      after(() => opened.close());

      it('keeps one declaration per market and day, the latest winning, and moves the revision with each change', async () => {
        const calendar = opened.store.calendar;
        assert.equal(await calendar.revision(), 0);
        await calendar.declare('tehran', ['2026-11-17', '2026-11-18'], 'close', 'اعتصاب بازار', 1000);
        await calendar.declare('international', ['2026-11-18'], 'close', 'Thanksgiving', 1001);
        await calendar.declare('tehran', ['2026-11-18'], 'open', 'ignored for an opening', 1002);
        assert.equal(await calendar.revision(), 3);
        assert.deepEqual(await calendar.list({ market: 'tehran' }), [
          { market: 'tehran', day: '2026-11-17', action: 'close', reason: 'اعتصاب بازار', set_at: 1000 },
          { market: 'tehran', day: '2026-11-18', action: 'open', reason: null, set_at: 1002 },
        ]);
        assert.deepEqual(
          (await calendar.list({ from: '2026-11-18', to: '2026-11-18' })).map((row) => `${row.market} ${row.day} ${row.action}`),
          ['international 2026-11-18 close', 'tehran 2026-11-18 open'],
        );
        await calendar.declare('tehran', [], 'close', null);
        assert.equal(await calendar.revision(), 3);
      });
    });

    describe('usage', () => {
      let opened: Opened;
      let store: Store;
      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
        store = opened.store;
      });
      after(() => opened.close());

      it('record() adds up counts of the same account/key/day/service and folds errors of the same minute', async () => {
        const count = (ok: number, errors: number, service = 'detail', key = 'key_a', day = '2026-11-20') => ({ account_id: 'acc_u1', key_id: key, day, service, ok, errors });
        await store.usage.record([count(3, 1), count(5, 0, 'catalogue')], [errorEntry('acc_u1', 1000, { key_id: 'key_a', path: '/first' })]);
        // The same minute (also twice within one batch), then the next minute.
        await store.usage.record([count(4, 2)], [errorEntry('acc_u1', 3000, { key_id: 'key_b', path: '/third' }), errorEntry('acc_u1', 2000, { path: '/second' }), errorEntry('acc_u1', 61_000)]);
        await store.usage.record([], []);
        const rows = await store.connection.db.selectFrom('usage_daily').selectAll().where('account_id', '=', 'acc_u1').orderBy('service').execute();
        assert.deepEqual(
          rows.map((r) => ({ ...r, ok: Number(r.ok), errors: Number(r.errors) })),
          [count(5, 0, 'catalogue'), count(7, 3)],
        );
        // One entry per minute, with the latest failure's key, time and path.
        assert.deepEqual(
          (await store.usage.errors('acc_u1', 0)).map((e) => [e.at, e.count, e.key_id, e.path]),
          [
            [61_000, 1, 'key_x', '/v1/rates/x'],
            [3000, 3, 'key_b', '/third'],
          ],
        );
        // A late failure of a minute already logged adds its count and leaves the latest details.
        await store.usage.record([], [errorEntry('acc_u1', 1500, { count: 4, path: '/late' })]);
        assert.deepEqual(
          (await store.usage.errors('acc_u1', 0)).map((e) => [e.at, e.count, e.path]),
          [
            [61_000, 1, '/v1/rates/x'],
            [3000, 7, '/third'],
          ],
        );
        const rows2 = await store.connection.db.selectFrom('usage_errors').select(['minute']).where('account_id', '=', 'acc_u1').orderBy('minute').execute();
        assert.deepEqual(
          rows2.map((r) => Number(r.minute)),
          [0, 60_000],
        );
        assert.deepEqual(await store.usage.total('acc_u1'), { ok: 12, errors: 3 });
      });

      it('applies a batch sent twice under the same id once', async () => {
        const counts = [{ account_id: 'acc_batch', key_id: 'k', day: '2026-11-20', service: 'detail', ok: 4, errors: 1 }];
        const errors = [errorEntry('acc_batch', 1000)];
        assert.equal(await store.usage.record(counts, errors, 'node-1'), true);
        assert.equal(await store.usage.record(counts, errors, 'node-1'), false, 'the second send is recognised');
        assert.equal(await store.usage.record(counts, [], 'node-2'), true);
        assert.deepEqual(await store.usage.total('acc_batch'), { ok: 8, errors: 2 });
        assert.deepEqual(
          (await store.usage.errors('acc_batch', 0)).map((e) => e.count),
          [1],
          'the second send added no error either',
        );
        await store.usage.pruneBatches(Date.now() + 2 * 86_400_000);
        assert.equal(await store.usage.record(counts, [], 'node-1'), true, 'a pruned id is forgotten');
      });

      it('adds hourly counts per account and hour, once per batch id, and prunes old hours', async () => {
        const counts = [{ account_id: 'acc_hour', key_id: 'k', day: '2026-11-28', service: 'detail', ok: 5, errors: 0 }];
        const hours = [
          { account_id: 'acc_hour', hour: '2026-11-28T16', requests: 3 },
          { account_id: 'acc_hour', hour: '2026-11-28T15', requests: 2 },
        ];
        assert.equal(await store.usage.record(counts, [], 'hour-1', Date.now(), hours), true);
        assert.equal(await store.usage.record(counts, [], 'hour-1', Date.now(), hours), false);
        assert.equal(await store.usage.record(counts, [], 'hour-2', Date.now(), [{ account_id: 'acc_hour', hour: '2026-11-28T16', requests: 4 }]), true);
        assert.equal(await store.usage.hourly('acc_hour', '2026-11-28T16'), 7);
        assert.equal(await store.usage.hourly('acc_hour', '2026-11-28T15'), 2);
        assert.equal(await store.usage.hourly('acc_hour', '2026-11-28T17'), 0);
        await store.usage.pruneHourly('2026-11-28T16');
        assert.equal(await store.usage.hourly('acc_hour', '2026-11-28T15'), 0);
        assert.equal(await store.usage.hourly('acc_hour', '2026-11-28T16'), 7);
      });

      it('record() lands a batch whole or not at all', async () => {
        const bad = { ...errorEntry('acc_u2', 1, { error: 'OTHER' }), path: null as unknown as string };
        await assert.rejects(store.usage.record([{ account_id: 'acc_u2', key_id: 'k', day: '2026-11-20', service: 'detail', ok: 9, errors: 1 }], [errorEntry('acc_u2', 0), bad]));
        assert.deepEqual(await store.usage.total('acc_u2'), { ok: 0, errors: 0 });
        assert.deepEqual(await store.usage.errors('acc_u2', 0), []);
      });

      it('daily() sums over keys per day and service, from the given day on, for that account only', async () => {
        const account = 'acc_daily';
        const row = (key: string, day: string, service: string, ok: number, errors: number) => ({ account_id: account, key_id: key, day, service, ok, errors });
        await store.usage.record(
          [
            row('key_1', '2026-11-18', 'detail', 100, 100),
            row('key_1', '2026-11-19', 'detail', 1, 0),
            row('key_2', '2026-11-19', 'detail', 2, 1),
            row('key_2', '2026-11-19', 'catalogue', 4, 0),
            row('key_1', '2026-11-20', 'webservice', 8, 2),
            row('key_2', '2026-11-20', 'webservice', 16, 0),
            { ...row('key_1', '2026-11-20', 'webservice', 1000, 1000), account_id: 'acc_other' },
          ],
          [],
        );
        const daily = await store.usage.daily(account, '2026-11-19');
        const sorted = [...daily].sort((a, b) => a.day.localeCompare(b.day) || a.service.localeCompare(b.service));
        assert.deepEqual(sorted, [
          { day: '2026-11-19', service: 'catalogue', ok: 4, errors: 0 },
          { day: '2026-11-19', service: 'detail', ok: 3, errors: 1 },
          { day: '2026-11-20', service: 'webservice', ok: 24, errors: 2 },
        ]);
        assert.deepEqual(
          daily.map((d) => d.day),
          sorted.map((d) => d.day),
          'daily() is ordered by day',
        );
        assert.equal((await store.usage.daily(account, '2026-11-18')).length, 4);
        assert.deepEqual(await store.usage.daily(account, '2026-11-21'), []);
        assert.deepEqual(await store.usage.daily('acc_none', '2000-01-01'), []);
        assert.deepEqual(await store.usage.total(account), { ok: 131, errors: 103 });
        assert.deepEqual(await store.usage.total('acc_none'), { ok: 0, errors: 0 });
      });

      it('errors() returns the newest first, from `since`, limited, with every field', async () => {
        const account = 'acc_errs';
        const entries = Array.from({ length: 12 }, (_, i) => errorEntry(account, 10_000 + i * 1000, { key_id: `key_${i % 2}`, http_status: 400 + i, error: `E${i}`, path: `/p/${i}` }));
        await store.usage.record([], entries.slice(0, 5));
        await store.usage.record([], entries.slice(5));
        await store.usage.record([], [errorEntry('acc_errs_other', 50_000)]);
        const all = await store.usage.errors(account, 0);
        assert.equal(all.length, 12);
        assert.deepEqual(all, [...entries].reverse());
        assert.deepEqual(
          (await store.usage.errors(account, 0, 3)).map((e) => e.error),
          ['E11', 'E10', 'E9'],
        );
        assert.deepEqual(
          (await store.usage.errors(account, 19_000)).map((e) => e.error),
          ['E11', 'E10', 'E9'],
        );
        assert.deepEqual(await store.usage.errors(account, 100_000), []);
      });

      it('pruneErrors() keeps the newest 1000 per account and drops entries older than 30 days', async () => {
        const now = 1_800_000_000_000;
        const oldest = now - ERROR_LOG_DAYS * DAY_MS;
        assert.equal(ERROR_LOG_LIMIT, 1000);
        assert.equal(ERROR_LOG_DAYS, 30);
        const busy = 'acc_busy';
        const quiet = 'acc_quiet';
        // 1005 recent entries for one account, written in several batches, oldest first.
        const busyEntries = Array.from({ length: 1005 }, (_, i) => errorEntry(busy, now - 1005 + i, { error: `B${i}` }));
        for (let i = 0; i < busyEntries.length; i += 300) await store.usage.record([], busyEntries.slice(i, i + 300));
        // A quiet account: one just past 30 days, one exactly at the edge, one recent.
        await store.usage.record([], [errorEntry(quiet, oldest - 1, { error: 'too-old' }), errorEntry(quiet, oldest, { error: 'edge' }), errorEntry(quiet, now - 5, { error: 'recent' })]);
        await store.usage.record([], [errorEntry(busy, oldest - DAY_MS, { error: 'ancient' })]);

        await store.usage.pruneErrors([busy], now);

        const kept = await store.usage.errors(busy, 0, 5000);
        assert.equal(kept.length, ERROR_LOG_LIMIT);
        assert.ok(!kept.some((e) => e.error === 'ancient'), '!kept.some((e) => e.error === \'ancient\')');
        // Exactly the newest 1000 survive.
        assert.deepEqual(
          kept.map((e) => e.error),
          busyEntries
            .slice(-1000)
            .reverse()
            .map((e) => e.error),
        );
        // The age limit applies to every account; the count limit only to those named.
        assert.deepEqual(
          (await store.usage.errors(quiet, 0)).map((e) => e.error),
          ['recent', 'edge'],
        );
        // Pruning again changes nothing.
        await store.usage.pruneErrors([busy, quiet], now);
        assert.equal((await store.usage.errors(busy, 0, 5000)).length, ERROR_LOG_LIMIT);
        assert.equal((await store.usage.errors(quiet, 0)).length, 2);
      });
    });

    describe('usage meter with a real store', () => {
      let opened: Opened;
      let store: Store;
      let accountId: string;
      let keyA: string;
      let keyB: string;
      const time = new ZoneTime('Asia/Tehran');
      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
        store = opened.store;
        accountId = (await store.accounts.create('metered', 'pro')).id;
        keyA = (await store.keys.issue(accountId)).id;
        keyB = (await store.keys.issue(accountId)).id;
      });
      after(() => opened.close());

      it('counts every recorded request and writes them on flush', async () => {
        const failures: unknown[] = [];
        const meter = new UsageMeter(store.usage, store.keys, time, store.health, (error) => failures.push(error));
        const now = Date.now();
        const day = time.day(now);
        const revision = await store.accounts.revision();
        let ok = 0;
        let failed = 0;
        for (let i = 0; i < 600; i++) {
          const key = i % 3 === 0 ? keyB : keyA;
          const service = ['detail', 'catalogue', 'webservice'][i % 3 === 0 ? 0 : i % 2 === 0 ? 1 : 2]!;
          const failure = i % 10 === 0 ? { status: 404, error: 'NOT_FOUND', path: `/v1/rates/x${i}` } : null;
          if (failure) failed++;
          else ok++;
          meter.record(accountId, key, service, now + i, failure);
        }
        // Nothing written before the flush.
        assert.deepEqual(await store.usage.total(accountId), { ok: 0, errors: 0 });
        await meter.flush();
        assert.deepEqual(failures, []);
        assert.deepEqual(await store.usage.total(accountId), { ok, errors: failed });
        const daily = await store.usage.daily(accountId, day);
        assert.equal(
          daily.reduce((sum, row) => sum + row.ok + row.errors, 0),
          600,
        );
        assert.deepEqual(new Set(daily.map((row) => row.day)), new Set([day]));
        const errors = await store.usage.errors(accountId, 0, 5000);
        assert.equal(sum(errors.map((e) => e.count)), failed);
        // One entry per service and minute (the 600 ms may straddle a minute).
        assert.deepEqual(new Set(errors.map((e) => e.service)), new Set(['detail', 'catalogue']));
        assert.ok(errors.length <= 4, `${errors.length} entries`);
        assert.equal(errors[0]!.path, '/v1/rates/x590');
        // Last-used times ride along; they do not bump the revision.
        assert.equal((await store.keys.find(keyA))?.last_used_at, now + 599);
        assert.equal((await store.keys.find(keyB))?.last_used_at, now + 597);
        assert.equal(await store.accounts.revision(), revision);
        // A second flush with nothing pending adds nothing.
        await meter.flush();
        assert.deepEqual(await store.usage.total(accountId), { ok, errors: failed });
      });

      it('counts requests either side of midnight under their own days', async () => {
        const meter = new UsageMeter(store.usage, store.keys, time, store.health);
        const midnight = time.nextMidnight(Date.now());
        const [before, after] = [time.day(midnight - 1), time.day(midnight)];
        const totalBefore = await store.usage.total(accountId);
        // Out of order too: a late request for the old day after the new one has begun.
        for (const at of [midnight - 2, midnight - 1, midnight, midnight - 1, midnight + 1, midnight + 2]) meter.record(accountId, keyA, 'usage', at, null);
        await meter.flush();
        const usageRows = async (day: string) => (await store.usage.daily(accountId, day)).filter((row) => row.day === day && row.service === 'usage');
        assert.deepEqual((await usageRows(before)).map((row) => row.ok), [3]);
        assert.deepEqual((await usageRows(after)).map((row) => row.ok), [3]);
        assert.deepEqual(await store.usage.total(accountId), { ok: totalBefore.ok + 6, errors: totalBefore.errors });
      });

      it('keeps a batch that failed to write and writes it, exactly once, on the next flush', async () => {
        const failures: unknown[] = [];
        const meter = new UsageMeter(store.usage, store.keys, time, store.health, (error) => failures.push(error));
        const before = await store.usage.total(accountId);
        const logged = async () => sum((await store.usage.errors(accountId, 0, 5000)).map((e) => e.count));
        const errorsBefore = await logged();
        const now = Date.now();
        for (let i = 0; i < 50; i++) meter.record(accountId, keyA, 'detail', now + i, i < 5 ? { status: 400, error: 'BAD', path: '/bad' } : null);

        // Take the counts table away: the write fails for real, inside the store.
        await sql`alter table usage_daily rename to usage_daily_away`.execute(store.connection.db);
        try {
          await meter.flush();
        } finally {
          await sql`alter table usage_daily_away rename to usage_daily`.execute(store.connection.db);
        }
        assert.equal(failures.length, 1, 'the failure is reported');
        assert.deepEqual(await store.usage.total(accountId), before);
        assert.equal(await logged(), errorsBefore, 'the failed batch wrote no errors');
        assert.equal(store.health.reachable, false, 'the failed write marks the store unreachable');
        assert.equal(meter.backlog().pendingRequests, 50);
        // While the store is known to be away the meter holds its counts; the next successful ping brings it back.
        await meter.flush();
        assert.deepEqual(await store.usage.total(accountId), before);
        assert.equal(await store.ping(), true);

        // More requests arrive before the retry.
        for (let i = 0; i < 20; i++) meter.record(accountId, keyB, 'detail', now + 100 + i, i < 2 ? { status: 400, error: 'BAD', path: '/bad' } : null);
        meter.record(accountId, keyA, 'detail', now + 200, null);
        await meter.flush();
        assert.equal(failures.length, 1);
        assert.deepEqual(await store.usage.total(accountId), { ok: before.ok + 45 + 18 + 1, errors: before.errors + 5 + 2 });
        assert.equal(await logged(), errorsBefore + 7);
        assert.deepEqual(meter.backlog(), { pendingRequests: 0, pendingErrors: 0, droppedRequests: 0, droppedErrors: 0 });
        await meter.flush();
        assert.deepEqual(await store.usage.total(accountId), { ok: before.ok + 64, errors: before.errors + 7 });
      });

      it('overlapping flushes and stop() write every request exactly once', async () => {
        const meter = new UsageMeter(store.usage, store.keys, time, store.health);
        const before = await store.usage.total(accountId);
        const now = Date.now();
        for (let i = 0; i < 30; i++) meter.record(accountId, keyA, 'catalogue', now, null);
        const first = meter.flush();
        for (let i = 0; i < 7; i++) meter.record(accountId, keyB, 'catalogue', now, null);
        const second = meter.flush();
        meter.record(accountId, keyB, 'catalogue', now, { status: 429, error: 'RATE_LIMITED', path: '/v1/rates' });
        await Promise.all([first, second]);
        meter.record(accountId, keyB, 'catalogue', now, null);
        await meter.stop();
        assert.deepEqual(await store.usage.total(accountId), { ok: before.ok + 38, errors: before.errors + 1 });
      });

      it('folds 2,000 refusals of a minute into one entry per service and error, written once, after the minute', async () => {
        // The real repository, with every error-log entry it is handed written down.
        const handed: UsageErrorEntry[] = [];
        const usage = new (class extends UsageRepository {
          override record(counts: UsageCount[], errors: UsageErrorEntry[], batchId?: string, now?: number): Promise<boolean> {
            handed.push(...errors.map((e) => ({ ...e })));
            return super.record(counts, errors, batchId, now);
          }
        })(store.connection.db);
        const account = (await store.accounts.create('spender', 'pro')).id;
        const [first, second] = [(await store.keys.issue(account)).id, (await store.keys.issue(account)).id];
        const minute = minuteOf(Date.now());
        const clock = new ManualClock(minute + 5_000);
        const meter = new UsageMeter(usage, store.keys, new ZoneTime('Asia/Tehran', clock), store.health);
        const refuse = (i: number) =>
          i % 2 === 0
            ? { service: 'detail', failure: { status: 429, error: 'RATE_LIMIT_EXCEEDED', path: `/v1/rates/usd_free?n=${i}` } }
            : { service: 'catalogue', failure: { status: 403, error: 'SERVICE_NOT_ACTIVE', path: `/v1/rates?n=${i}` } };
        // 2,000 refusals over 40 s, with a timer flush every 100: counts go out at once, the log waits for the minute's end.
        for (let i = 0; i < 2000; i++) {
          clock.advance(20);
          const { service, failure } = refuse(i);
          meter.record(account, i % 3 === 0 ? first : second, service, clock.now(), failure);
          if (i % 100 === 99) await meter.flush(false);
        }
        assert.deepEqual(await store.usage.total(account), { ok: 0, errors: 2000 });
        assert.deepEqual(handed, [], 'nothing of the running minute is written to the log');
        assert.equal(meter.backlog().pendingErrors, 2);
        // The minute passes: its two entries are written, once each.
        clock.set(minute + 60_000 + 100);
        await meter.flush(false);
        await meter.flush(false);
        const entries = (await store.usage.errors(account, 0)).map((e) => ({ at: e.at - minute, key: e.key_id, service: e.service, status: e.http_status, error: e.error, count: e.count, path: e.path }));
        assert.deepEqual(entries, [
          { at: 45_000, key: second, service: 'catalogue', status: 403, error: 'SERVICE_NOT_ACTIVE', count: 1000, path: '/v1/rates?n=1999' },
          { at: 44_980, key: first, service: 'detail', status: 429, error: 'RATE_LIMIT_EXCEEDED', count: 1000, path: '/v1/rates/usd_free?n=1998' },
        ]);
        assert.equal(handed.length, 2);
        // A report's flush writes the running minute at once; what follows in that minute adds to the same row.
        for (let i = 0; i < 3; i++) meter.record(account, first, 'detail', clock.now() + i, refuse(0).failure);
        await meter.flush();
        for (let i = 0; i < 4; i++) meter.record(account, first, 'detail', clock.now() + 10 + i, refuse(0).failure);
        await meter.stop();
        assert.deepEqual(
          (await store.usage.errors(account, minute + 60_000)).map((e) => [e.count, e.at - minute]),
          [[7, 60_113]],
        );
        assert.deepEqual(await store.usage.total(account), { ok: 0, errors: 2007 });
      });

      it('two nodes folding the same minute add up to one entry', async () => {
        const other = await Store.open(opened.options);
        try {
          const account = (await store.accounts.create('two-nodes', 'pro')).id;
          const key = (await store.keys.issue(account)).id;
          const nodes = [new UsageMeter(store.usage, store.keys, time, store.health), new UsageMeter(other.usage, other.keys, time, other.health)];
          const now = Date.now();
          for (let i = 0; i < 500; i++) for (const [n, node] of nodes.entries()) node.record(account, key, 'detail', now, { status: 429, error: 'RATE_LIMIT_EXCEEDED', path: `/node/${n}` });
          // At once on PostgreSQL (both upserts meet on one row). One after the other on SQLite: two synchronous
          // connections in one process would block each other's write lock (separate processes wait their turn).
          const each = async (step: (node: UsageMeter) => Promise<unknown>) => {
            if (dialect.databaseUrl) await Promise.all(nodes.map(step));
            else for (const node of nodes) await step(node);
          };
          await each((node) => node.flush());
          for (let i = 0; i < 100; i++) nodes[1]!.record(account, key, 'detail', now, { status: 429, error: 'RATE_LIMIT_EXCEEDED', path: '/node/1' });
          await each((node) => node.stop());
          assert.deepEqual(
            (await store.usage.errors(account, 0)).map((e) => e.count),
            [1100],
          );
          assert.deepEqual(await store.usage.total(account), { ok: 0, errors: 1100 });
        } finally {
          await other.close();
        }
      });

      it('stop() says what it could not write: requests, and error-log entries with their failures', async () => {
        const meter = new UsageMeter(store.usage, store.keys, time, store.health);
        const now = Date.now();
        for (let i = 0; i < 30; i++) meter.record(accountId, keyA, 'detail', now, i < 12 ? { status: 404, error: 'RATE_NOT_FOUND', path: '/v1/rates/nope' } : null);
        meter.record(accountId, keyA, 'catalogue', now, { status: 400, error: 'INVALID_PARAMETER', path: '/v1/rates?x=1' });
        store.health.failed('database file removed or replaced; restart to reopen it', now);
        try {
          assert.deepEqual(await meter.stop(), { requests: 31, errorEntries: 2, errors: 13 });
        } finally {
          assert.equal(await store.ping(), true);
        }
        const written = new UsageMeter(store.usage, store.keys, time, store.health);
        written.record(accountId, keyA, 'detail', now, { status: 404, error: 'RATE_NOT_FOUND', path: '/v1/rates/nope' });
        assert.equal(await written.stop(), null, 'nothing lost when everything landed');
      });
    });

    describe('access directory with the real store and bundled catalogue', () => {
      let opened: Opened;
      let store: Store;
      let second: Store;
      const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
      const plans = buildPlans(catalogue.popular);
      const plan = (name: string): Plan => plans.get(name)!;
      let directory: AccessDirectory;
      const keys: Record<string, { id: string; key: string }> = {};

      before(async () => {
        opened = await openFresh(dialect.databaseUrl);
        store = opened.store;
        // A second store on the same database, as the CLI in another process would open it.
        second = await Store.open(opened.options);
        const shop = await store.accounts.create('shop', 'basic');
        await store.accounts.update('shop', { origins: ['https://shop.example'], overrides: { requests_per_minute: 100 } });
        const big = await store.accounts.create('big', 'enterprise');
        await store.accounts.create('chosen', 'pro');
        await store.accounts.update('chosen', { references: ['sekkeh', 'usd_free', 'coin_emami'] });
        const legacy = await store.accounts.create('legacy', 'gold-plan-removed');
        keys.shop1 = await store.keys.issue(shop.id);
        keys.shop2 = await store.keys.issue(shop.id, { expiresAt: 1_900_000_000_000 });
        keys.dead = await store.keys.issue(shop.id);
        await store.keys.revoke(keys.dead.id);
        keys.big = await store.keys.issue(big.id);
        keys.legacy = await store.keys.issue(legacy.id);
        directory = new AccessDirectory(store, plans, catalogue);
        await directory.load();
      });
      after(async () => {
        directory.stop();
        await second.close();
        await opened.close();
      });

      it('load() indexes live keys by hash, with their account and plan', () => {
        assert.equal(directory.keyCount, 4);
        const shop1 = directory.lookup(hashKey(keys.shop1!.key));
        assert.ok(shop1, 'shop1');
        assert.equal(shop1.id, keys.shop1!.id);
        assert.equal(shop1.expiresAt, null);
        assert.equal(shop1.account.username, 'shop');
        assert.equal(shop1.account.active, true);
        assert.equal(shop1.account.plan.name, 'basic');
        assert.deepEqual([...shop1.account.services].sort(), ['catalogue', 'detail', 'usage']);
        assert.deepEqual(shop1.account.limits, { perMinute: 100, perDay: 10_000 });
        assert.deepEqual(shop1.account.origins, new Set(['https://shop.example']));
        assert.equal(directory.lookup(hashKey(keys.shop2!.key))?.expiresAt, 1_900_000_000_000);
        // Both keys of one account share its access record.
        assert.equal(directory.lookup(hashKey(keys.shop2!.key))?.account, shop1.account);
        assert.equal(directory.lookup(hashKey(keys.dead!.key)), undefined, 'a revoked key is not loaded');
        assert.equal(directory.lookup(hashKey(keys.shop1!.key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')))), undefined);
        assert.equal(directory.lookup(keys.shop1!.key), undefined, 'the directory is keyed by hash, not by key');
        const big = directory.lookup(hashKey(keys.big!.key))!;
        assert.deepEqual(big.account.limits, { perMinute: 6000, perDay: null });
        assert.equal(big.account.allowance, null);
        assert.equal(big.account.origins, null);
      });

      it('keeps an account whose plan is no longer configured, with no services', () => {
        const legacy = directory.lookup(hashKey(keys.legacy!.key));
        assert.ok(legacy, 'legacy');
        assert.equal(legacy.account.services.size, 0);
        assert.deepEqual(legacy.account.allowance, new Set());
      });

      it('poll() picks up a revoke, a new key and a suspension made through a second store', async () => {
        const shopId = (await second.accounts.find('shop'))!.id;
        assert.equal(await second.keys.revoke(keys.shop1!.id), true);
        const fresh = await second.keys.issue(shopId, { label: 'from-cli' });
        await second.accounts.update('big', { status: 'suspended' });
        // Still the old view until the directory polls.
        assert.ok(directory.lookup(hashKey(keys.shop1!.key)), 'directory.lookup(hashKey(keys.shop1!.key))');
        await directory.poll();
        assert.equal(directory.lookup(hashKey(keys.shop1!.key)), undefined);
        assert.equal(directory.lookup(hashKey(fresh.key))?.id, fresh.id);
        assert.equal(directory.lookup(hashKey(keys.big!.key))?.account.active, false);
        assert.equal(directory.account('big')?.active, false);
        assert.equal(directory.keyCount, 4);
      });

      it('with its timer running, a revoke in the second store takes effect', async () => {
        directory.start();
        await second.keys.revoke(keys.shop2!.id);
        await eventually(() => directory.lookup(hashKey(keys.shop2!.key)) === undefined, 2000, 20);
        directory.stop();
      });

      it('allowance: the selection, canonicalised and de-duplicated, or the plan defaults', () => {
        assert.equal(catalogue.lookup('sekkeh')?.key, 'coin_emami');
        assert.deepEqual(directory.account('chosen')?.allowance, new Set(['coin_emami', 'usd_free']));
        // shop has no selection: basic's 50 most popular references.
        const shopAllowance = directory.account('shop')!.allowance!;
        assert.equal(shopAllowance.size, 50);
        assert.deepEqual(shopAllowance, new Set(catalogue.popular.slice(0, 50)));
        assert.ok(shopAllowance.has('usd_free'), 'shopAllowance.has(\'usd_free\')');
      });

      it('allowanceFor(): plan defaults, cut to max_references, null for unlimited', () => {
        const popular = catalogue.popular;
        assert.ok(popular.length > 150, 'popular.length > 150');
        assert.deepEqual(allowanceFor(plan('basic'), null, catalogue), new Set(popular.slice(0, 50)));
        assert.deepEqual(allowanceFor(plan('basic'), [], catalogue), new Set(popular.slice(0, 50)));
        assert.deepEqual(allowanceFor(plan('pro'), null, catalogue), new Set(popular.slice(0, 150)));
        assert.equal(allowanceFor(plan('enterprise'), null, catalogue), null);
        assert.equal(allowanceFor(plan('enterprise'), [], catalogue), null);
        // Enterprise with a selection serves exactly that selection, however long.
        const many = popular.slice(0, 200);
        assert.deepEqual(allowanceFor(plan('enterprise'), many, catalogue), new Set(many));
        assert.deepEqual(allowanceFor(plan('enterprise'), ['sekkeh', 'usd_free'], catalogue), new Set(['coin_emami', 'usd_free']));
        // A selection beyond the limit is cut, in selection order (not popularity order).
        const reversed = [...popular.slice(0, 60)].reverse();
        assert.deepEqual(allowanceFor(plan('basic'), reversed, catalogue), new Set(reversed.slice(0, 50)));
        // Aliases are canonicalised before de-duplication and the cut; unknown names are dropped.
        const withAliases = ['sekkeh', 'coin_emami', 'SEKKEH', 'nope-not-a-reference', ...popular.slice(0, 60).filter((k) => k !== 'coin_emami')];
        const cut = allowanceFor(plan('basic'), withAliases, catalogue)!;
        assert.equal(cut.size, 50);
        assert.ok(cut.has('coin_emami'), 'cut.has(\'coin_emami\')');
        assert.ok(!cut.has('nope-not-a-reference') && !cut.has('sekkeh'), '!cut.has(\'nope-not-a-reference\') && !cut.has(\'sekkeh\')');
        // Per-account overrides change the limit, for defaults and selections alike.
        const five = applyOverrides(plan('basic'), { max_references: 5 });
        assert.deepEqual(allowanceFor(five, null, catalogue), new Set(popular.slice(0, 5)));
        assert.deepEqual(allowanceFor(five, popular.slice(10, 20), catalogue), new Set(popular.slice(10, 15)));
        const unlimited = applyOverrides(plan('basic'), { max_references: null });
        assert.equal(allowanceFor(unlimited, null, catalogue), null);
        assert.deepEqual(allowanceFor(unlimited, popular.slice(0, 80), catalogue), new Set(popular.slice(0, 80)));
      });
    });
  });
}
