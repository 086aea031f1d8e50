/**
 * Access control end to end: the real `nerkh serve` process, the real CLI in
 * other processes, plain HTTP on 127.0.0.1. Covers key issue/revoke and
 * suspension across processes, plan services, reference allowances, refresh
 * tiers, the webservice per-user feed, usage metering across a restart, and
 * that no key is ever stored or logged. Per-minute limits and their headers
 * are in rate-limit-window.test.ts, on a server whose clock starts a minute.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Sqlite from 'better-sqlite3';
import { Store } from '../../src/store/store.js';
import { tempDir, writeSource } from '../support/env.js';
import {
  assertBuilt,
  catalogueSourceKeys,
  cliJson,
  cliOk,
  cliOkEach,
  filesContaining,
  filesUnder,
  get,
  pollUntil,
  secondsToNextBoundary,
  sleep,
  startServer,
  type HttpResult,
  type ServerProcess,
} from './access-helpers.js';

interface IssuedKeyJson {
  id: string;
  key: string;
  username: string;
}

interface KeyListJson {
  id: string;
  state: string;
}

interface UsageJson {
  account: string;
  daily: { date: string; requests: number; errors: number }[];
  services: { service: string; requests: number }[];
  errors: { service: string; http_status: number; error: string; count: number }[];
}

const PROPAGATION_MS = 2000;
/** The plan of 5 requests a minute and the 6 s refresh plan, merged over the defaults. */
const PLANS = {
  tiny: { services: ['catalogue', 'detail', 'usage'], requests_per_minute: 5, refresh_interval_seconds: 1 },
  six: { services: ['catalogue', 'detail'], refresh_interval_seconds: 6, requests_per_minute: 1000 },
};

const errorOf = (r: HttpResult) => (r.body ? r.body.error : undefined);
const describeResult = (r: HttpResult) => `${r.status} ${r.text.slice(0, 300)}`;
const ratesOf = (r: HttpResult) => (r.body?.rates ?? []) as { key: string; value: number | null }[];
const valueOf = (r: HttpResult, key: string) => ratesOf(r).find((rate) => rate.key === key)?.value;

describe('access control end to end (server and CLI in separate processes)', { timeout: 170_000 }, () => {
  const tmp = tempDir('nerkh-e2e-access-');
  const dataDir = join(tmp.path, 'data');
  const sourceDir = join(tmp.path, 'sources');
  const sourcePath = join(sourceDir, 'alpha.json');
  const configPath = join(tmp.path, 'nerkh.config.json');
  const sourceKeys = catalogueSourceKeys();
  const sourceKey = (key: string) => {
    const found = sourceKeys.get(key);
    assert.ok(found, `catalogue has no reference ${key}`);
    return found;
  };
  /** Current source values by reference key; rewritten as a whole on each change. */
  const values: Record<string, number> = { usd_free: 1_030_000, eur_free: 1_120_000, coin_emami: 880_000_000, gold_18k: 72_500_000, gbp_free: 1_300_000 };
  const writeValues = () => writeSource(sourcePath, Object.fromEntries(Object.entries(values).map(([key, value]) => [sourceKey(key), value])));

  const baseEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NERKH_') && name !== 'NODE_TEST_CONTEXT'));
  const env: NodeJS.ProcessEnv = { ...baseEnv, NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: dataDir, NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'info' };

  /** Every server process started, so `after` can kill them and their output can be checked for keys. */
  const servers: ServerProcess[] = [];
  let server: ServerProcess;
  /** Every key the CLI printed. */
  const issued: string[] = [];
  const keys: Record<string, IssuedKeyJson> = {};

  const issue = async (username: string): Promise<IssuedKeyJson> => {
    const result = await cliJson<IssuedKeyJson>(env, ['keys', 'issue', username]);
    assert.match(result.key, /^nrk_[A-Za-z0-9]{32}$/);
    assert.equal(result.username, username);
    issued.push(result.key);
    return result;
  };
  const start = async () => {
    server = await startServer(env, 0);
    servers.push(server);
    return server;
  };
  const rates = (key: string, list: string) => get(server.base, `/v1/rates/${list}`, key);

  // Should the runner die without running `after`, take the servers down with it.
  const killAll = () => {
    for (const s of servers) s.kill();
  };
  process.once('exit', killAll);

  before(async () => {
    assertBuilt();
    mkdirSync(sourceDir, { recursive: true });
    writeValues();
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 300, poll_seconds: 0.5 }], plans: PLANS }));
    // Only `serve` creates a store (an admin command refuses to): make it as serve does, then the commands may run side by side.
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    await cliOk(env, ['accounts', 'add', 'keyuser', '--plan', 'pro']);
    const accounts: [string, string][] = [
      ['basicuser', 'basic'],
      ['prouser', 'pro'],
      ['sixuser', 'six'],
      ['fastuser', 'enterprise'],
      ['counter', 'enterprise'],
    ];
    await cliOkEach(env, accounts.map(([username, plan]) => ['accounts', 'add', username, '--plan', plan]));
    const holders = ['keyuser', ...accounts.map(([username]) => username)];
    const made = await Promise.all(holders.map((username) => issue(username)));
    holders.forEach((username, i) => (keys[username] = made[i]!));
    await start();
  });

  after(() => {
    killAll();
    process.removeListener('exit', killAll);
    tmp.cleanup();
  });

  it('plans list shows the configured plans merged over the defaults', async () => {
    const plans = await cliJson<{ name: string; requests_per_minute: number; refresh_interval_seconds: number; services: string[] }[]>(env, ['plans', 'list']);
    const byName = new Map(plans.map((plan) => [plan.name, plan]));
    for (const name of ['basic', 'pro', 'enterprise', 'tiny', 'six']) assert.ok(byName.has(name), `plan ${name} listed`);
    assert.equal(byName.get('tiny')!.requests_per_minute, 5);
    assert.equal(byName.get('six')!.refresh_interval_seconds, 6);
    assert.equal(byName.get('enterprise')!.refresh_interval_seconds, 1);
  });

  it('a key issued, revoked or suspended by the CLI takes effect in the running server', async () => {
    const other = keys.keyuser!.key;
    assert.equal((await rates(other, 'usd_free')).status, 200);

    const fresh = await issue('keyuser');
    const works = await pollUntil(() => rates(fresh.key, 'usd_free'), (r) => r.status === 200, PROPAGATION_MS, 100, describeResult);
    assert.equal(valueOf(works.value, 'usd_free'), values.usd_free);

    const revoked = await cliJson<{ id: string; revoked: boolean }>(env, ['keys', 'revoke', fresh.id]);
    assert.equal(revoked.revoked, true);
    const fails = await pollUntil(() => rates(fresh.key, 'usd_free'), (r) => r.status !== 200, PROPAGATION_MS, 100, describeResult);
    assert.equal(fails.value.status, 401, describeResult(fails.value));
    assert.equal(errorOf(fails.value), 'API_KEY_INVALID');
    assert.equal(fails.value.headers.get('cache-control'), 'no-store');
    const listed = await cliJson<KeyListJson[]>(env, ['keys', 'list', 'keyuser']);
    assert.equal(listed.find((k) => k.id === fresh.id)?.state, 'revoked');
    assert.equal(listed.find((k) => k.id === keys.keyuser!.id)?.state, 'active');
    assert.equal((await rates(other, 'usd_free')).status, 200, "revoking one key leaves the account's other key working");

    await cliOk(env, ['accounts', 'set', 'keyuser', '--status', 'suspended']);
    const suspended = await pollUntil(() => rates(other, 'usd_free'), (r) => r.status !== 200, PROPAGATION_MS, 100, describeResult);
    assert.equal(suspended.value.status, 403, describeResult(suspended.value));
    assert.equal(errorOf(suspended.value), 'SERVICE_NOT_ACTIVE');
    const catalogue = await get(server.base, '/v1/rates', other);
    assert.equal(catalogue.status, 403);
    assert.equal(errorOf(catalogue), 'SERVICE_NOT_ACTIVE');

    await cliOk(env, ['accounts', 'set', 'keyuser', '--status', 'active']);
    await pollUntil(() => rates(other, 'usd_free'), (r) => r.status === 200, PROPAGATION_MS, 100, describeResult);
  });

  it('a basic key gets 403 SERVICE_NOT_ACTIVE on /v1/status, a pro key gets 200', async () => {
    const basic = await get(server.base, '/v1/status', keys.basicuser!.key);
    assert.equal(basic.status, 403, describeResult(basic));
    assert.equal(errorOf(basic), 'SERVICE_NOT_ACTIVE');
    assert.ok(basic.headers.get('x-ratelimit-limit'), 'limit headers on an authenticated 403');
    const pro = await get(server.base, '/v1/status', keys.prouser!.key);
    assert.equal(pro.status, 200, describeResult(pro));
    assert.equal(pro.body?.success, true);
    const sources = pro.body?.sources as { name: string }[];
    assert.deepEqual(
      sources.map((s) => s.name),
      ['alpha'],
    );
  });

  it('selected references: the rest is denied in meta, and a request for only denied ones is 403', async () => {
    const key = keys.basicuser!.key;
    // gold_18k is among basic's default references until a selection is made.
    const initial = await rates(key, 'usd_free,gold_18k');
    assert.equal(initial.status, 200);
    assert.deepEqual((initial.body?.meta as { denied_keys: string[] }).denied_keys, []);

    await cliOk(env, ['accounts', 'set', 'basicuser', '--references', 'usd_free,coin_emami']);
    const mixed = await pollUntil(
      () => rates(key, 'usd_free,gold_18k'),
      (r) => r.status === 200 && (r.body?.meta as { denied_keys: string[] }).denied_keys.length > 0,
      PROPAGATION_MS,
      100,
      describeResult,
    );
    assert.deepEqual((mixed.value.body?.meta as { denied_keys: string[] }).denied_keys, ['gold_18k']);
    assert.deepEqual(
      ratesOf(mixed.value).map((r) => r.key),
      ['usd_free'],
    );
    assert.equal(mixed.value.body?.count, 1);

    const denied = await rates(key, 'gold_18k');
    assert.equal(denied.status, 403, describeResult(denied));
    assert.equal(errorOf(denied), 'REFERENCE_NOT_IN_PLAN');
    const allowed = await rates(key, 'coin_emami');
    assert.equal(allowed.status, 200);
    assert.equal(valueOf(allowed, 'coin_emami'), values.coin_emami);
  });

  it('refresh tiers: a 1 s account sees a change within 2 s, a 6 s account only from the next 6 s boundary', async () => {
    const six = keys.sixuser!.key;
    const fast = keys.fastuser!.key;
    const key = 'gbp_free';
    const old = values[key]!;
    // Both tiers show the current value first (the 6 s one may need up to one boundary).
    await pollUntil(() => rates(fast, key), (r) => valueOf(r, key) === old, 3000, 200, describeResult);
    await pollUntil(() => rates(six, key), (r) => valueOf(r, key) === old, 8000, 200, describeResult);

    // Write just after a 6 s wall-clock boundary.
    for (let tries = 0; ; tries++) {
      assert.ok(tries < 5, 'could not hit the write window');
      const phase = Date.now() % 6000;
      if (phase >= 300 && phase <= 1200) break;
      await sleep(phase < 300 ? 350 - phase : 6000 - phase + 350);
    }
    const next = old + 12_345;
    values[key] = next;
    writeValues();
    const writtenAt = Date.now();
    assert.ok(writtenAt % 6000 <= 1500, `written ${writtenAt % 6000} ms after the boundary`);
    const boundary = writtenAt - (writtenAt % 6000) + 6000;

    let fastSawAt: number | null = null;
    let sixSawAt: number | null = null;
    const early: string[] = [];
    const badCache: string[] = [];
    let sixChecksBefore = 0;
    while (Date.now() < boundary + 1500 && (fastSawAt === null || sixSawAt === null)) {
      const [f, s] = await Promise.all([rates(fast, key), rates(six, key)]);
      assert.equal(f.status, 200, describeResult(f));
      assert.equal(s.status, 200, describeResult(s));
      if (fastSawAt === null && valueOf(f, key) === next) fastSawAt = f.receivedAt;
      const sixValue = valueOf(s, key);
      if (s.receivedAt < boundary) {
        sixChecksBefore++;
        if (sixValue !== old) early.push(`${sixValue} at ${boundary - s.receivedAt} ms before the boundary`);
      } else if (s.sentAt >= boundary && sixValue === next && sixSawAt === null) {
        sixSawAt = s.receivedAt;
      }
      const maxAge = /^private, max-age=(\d+)$/.exec(s.headers.get('cache-control') ?? '');
      const seconds = maxAge ? Number(maxAge[1]) : NaN;
      const expected = [secondsToNextBoundary(6, s.sentAt), secondsToNextBoundary(6, s.receivedAt)];
      if (!(seconds >= 1 && seconds <= 6 && expected.some((e) => Math.abs(e - seconds) <= 1))) badCache.push(`${s.headers.get('cache-control')} (expected ~${expected.join('/')})`);
      await sleep(150);
    }
    assert.deepEqual(early, [], 'the 6 s account saw the change before the next boundary');
    assert.ok(sixChecksBefore >= 5, `the 6 s account was checked ${sixChecksBefore} times before the boundary`);
    assert.deepEqual(badCache, [], 'Cache-Control max-age on the 6 s account follows its boundary');
    assert.ok(fastSawAt !== null && fastSawAt - writtenAt <= 2000, `the 1 s account saw the change after ${fastSawAt === null ? 'never' : `${fastSawAt - writtenAt} ms`}`);
    assert.ok(sixSawAt !== null && sixSawAt - boundary <= 1500, `the 6 s account saw the change ${sixSawAt === null ? 'never' : `${sixSawAt - boundary} ms`} after the boundary`);
  });

  it('/webservice/{username} serves only its owner; a stranger and a nonexistent name get identical 403s', async () => {
    const key = keys.prouser!.key;
    const own = await get(server.base, '/webservice/prouser', key);
    assert.equal(own.status, 200, describeResult(own));
    const body = own.body!;
    assert.equal(body.success, true);
    assert.equal(typeof body.server_time, 'number');
    assert.ok(Math.abs((body.server_time as number) - own.receivedAt / 1000) < 10, 'server_time is unix seconds');
    assert.equal(body.rates, undefined, 'flat webservice shape, not the detail envelope');
    const entry = body.usd_free as { title: string; value: number; unit: string; updated_at: string; date_jalali: string } | undefined;
    assert.ok(entry, 'the feed holds usd_free (pro default references)');
    assert.equal(entry.value, values.usd_free);
    assert.match(entry.date_jalali, /^1[34]\d\d\/\d\d\/\d\d$/);
    assert.match(entry.updated_at, /[+-]\d\d:\d\d$/);
    const entries = Object.entries(body).filter(([name]) => !['success', 'status', 'generated_at', 'server_time'].includes(name));
    assert.ok(entries.length > 10, 'entries.length > 10');
    for (const [name, value] of entries) {
      assert.ok(value && typeof value === 'object', `${name} is an entry`);
      for (const field of ['title', 'value', 'unit', 'updated_at', 'date_jalali']) assert.ok(field in value, `${name}.${field}`);
    }

    const stranger = await get(server.base, '/webservice/basicuser', key);
    const nobody = await get(server.base, '/webservice/nosuchuser', key);
    for (const r of [stranger, nobody]) {
      assert.equal(r.status, 403, describeResult(r));
      assert.equal(errorOf(r), 'SERVICE_NOT_ACTIVE');
    }
    const strip = (r: HttpResult) => {
      const copy: Record<string, unknown> = { ...r.body };
      delete copy.generated_at;
      delete copy.request_id;
      return copy;
    };
    assert.deepEqual(strip(stranger), strip(nobody));
    assert.deepEqual(Object.keys(stranger.body!), Object.keys(nobody.body!));
  });

  it('no plaintext key in the data directory (including the SQLite WAL) or in the server output', async () => {
    // Let the server's metering flush (last-used times) land in the WAL first: a request with a key, then that
    // key's last-used time written by the server (read from the WAL by a read-only connection of the test's own).
    const lastUsed = () => {
      const db = new Sqlite(join(dataDir, 'nerkh.sqlite'), { readonly: true });
      try {
        return (db.prepare('select last_used_at from api_keys where id = ?').get(keys.prouser!.id) as { last_used_at: number | null } | undefined)?.last_used_at ?? null;
      } finally {
        db.close();
      }
    };
    const usedBefore = lastUsed();
    assert.equal((await get(server.base, '/v1/status', keys.prouser!.key)).status, 200);
    await pollUntil(async () => lastUsed(), (at) => at !== null && (usedBefore === null || at > usedBefore), 5000);
    const files = filesUnder(dataDir).map((file) => basename(file));
    assert.ok(files.includes('nerkh.sqlite'), `data dir holds ${files.join(', ')}`);
    assert.ok(files.some((file) => file.endsWith('-wal')), `a WAL file to scan: ${files.join(', ')}`);
    assert.ok(issued.length >= 7, `${issued.length} keys issued`);
    assert.deepEqual(filesContaining(dataDir, issued), []);
    // The scan does read the store: the public key ids are there.
    const ids = Object.values(keys).map((k) => k.id);
    assert.ok(filesContaining(dataDir, ids).length > 0, 'key ids found in the data directory');
    const output = server.stdout() + server.stderr();
    assert.match(output, /nerkh listening on/);
    assert.deepEqual(
      issued.filter((key) => output.includes(key)),
      [],
    );
  });

  it('usage counts every request, failed or not, across a restart (SIGTERM exits 0 within 10 s)', async () => {
    const key = keys.counter!.key;
    const plan: [path: string, status: number, error?: string][] = [
      ['/v1/rates/usd_free', 200],
      ['/v1/rates/usd_free,eur_free', 200],
      ['/v1/rates/no_such_reference', 404, 'RATE_NOT_FOUND'],
      ['/v1/rates', 200],
      ['/v1/rates/bad$key', 400, 'INVALID_KEYS'],
      ['/v1/rates/USD', 200],
      ['/v1/rates/zz_unknown,yy_unknown', 404, 'RATE_NOT_FOUND'],
      ['/v1/rates/a,,b', 400, 'INVALID_KEYS'],
      ['/v1/rates?category=gold', 200],
      ['/v1/rates/%20', 400, 'INVALID_KEYS'],
      ['/v1/rates/coin_emami', 200],
    ];
    const sent = { requests: 0, errors: 0, byError: new Map<string, number>() };
    const send = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const [path, status, error] = plan[i % plan.length]!;
        const r = await get(server.base, path, key);
        sent.requests++;
        assert.equal(r.status, status, `${path}: ${describeResult(r)}`);
        if (status >= 400) {
          sent.errors++;
          assert.equal(errorOf(r), error);
          sent.byError.set(error!, (sent.byError.get(error!) ?? 0) + 1);
        }
      }
    };
    const stopServer = async () => {
      const stopped = await server.stop();
      assert.equal(stopped.code, 0, `exit ${stopped.code ?? stopped.signal}; stderr: ${server.stderr()}`);
    };
    const checkUsage = async () => {
      const report = await cliJson<UsageJson>(env, ['usage', 'counter']);
      assert.equal(report.account, 'counter');
      const requests = report.daily.reduce((sum, day) => sum + day.requests, 0);
      const errors = report.daily.reduce((sum, day) => sum + day.errors, 0);
      assert.equal(requests, sent.requests, `requests counted: ${JSON.stringify(report.daily.filter((d) => d.requests > 0))}`);
      assert.equal(errors, sent.errors);
      // All of it today (unless this test straddled midnight in the zone).
      const today = report.daily[report.daily.length - 1]!;
      if (today.requests !== sent.requests) assert.ok(report.daily.filter((d) => d.requests > 0).length === 2, 'only across midnight may counts split');
      const byError = new Map<string, number>();
      // Repeats within a minute are one entry with a count.
      for (const entry of report.errors) byError.set(entry.error, (byError.get(entry.error) ?? 0) + entry.count);
      assert.deepEqual(Object.fromEntries([...byError].sort()), Object.fromEntries([...sent.byError].sort()));
      assert.deepEqual(report.services.map((s) => s.service).sort(), ['catalogue', 'detail']);
      assert.equal(
        report.services.reduce((sum, s) => sum + s.requests, 0),
        sent.requests,
      );
    };

    await send(plan.length);
    assert.ok(sent.errors > 0 && sent.errors < sent.requests, 'sent.errors > 0 && sent.errors < sent.requests');
    await stopServer();
    await checkUsage();

    await start();
    await send(7);
    await stopServer();
    await checkUsage();
    assert.equal(sent.requests, plan.length + 7);

    // After the shutdowns too: nothing in the data directory or in any server's output holds a key.
    assert.deepEqual(filesContaining(dataDir, issued), []);
    const output = servers.map((s) => s.stdout() + s.stderr()).join('\n');
    assert.deepEqual(
      issued.filter((k) => output.includes(k)),
      [],
    );
  });
});
