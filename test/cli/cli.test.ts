import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { hashKey, KEY_FORMAT } from '../../src/domain/key-material.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';

const BIN = fileURLToPath(new URL('../../bin/nerkh.js', import.meta.url));
const COMPILED = fileURLToPath(new URL('../../dist/bundle/main.js', import.meta.url));
const DAY_MS = 86_400_000;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the real `nerkh` command in a child process, with only the environment given (no inherited NERKH_*). */
function nerkh(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Result> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('NERKH_') && !name.startsWith('NODE_TEST')) env[name] = value;
  }
  Object.assign(env, options.env ?? {});
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { cwd: options.cwd, env, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(error);
        return;
      }
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

/** Run jobs with at most `limit` child processes at a time. */
async function pool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function ok(result: Result, label = ''): string {
  assert.equal(result.code, 0, `${label} exited ${result.code}: ${result.stderr}`);
  assert.equal(result.stderr, '', `${label} wrote to stderr`);
  return result.stdout;
}

function parse<T>(result: Result, label = ''): T {
  return JSON.parse(ok(result, label)) as T;
}

/** A user error: one `nerkh:` line on stderr, nothing on stdout, no stack trace, non-zero exit. */
function assertUserError(result: Result, pattern: RegExp, label: string): void {
  assert.notEqual(result.code, 0, `${label}: expected a non-zero exit; stdout: ${result.stdout}`);
  assert.match(result.stderr, /^nerkh: [^\n]+\n$/, `${label}: stderr is not one "nerkh:" line: ${JSON.stringify(result.stderr)}`);
  assert.doesNotMatch(result.stderr, /\bat .+:\d+:\d+|\n\s+at /, `${label}: stack trace on stderr`);
  assert.doesNotMatch(result.stderr, /Error:/, `${label}: raw error class on stderr`);
  assert.match(result.stderr, pattern, label);
  assert.equal(result.stdout, '', `${label}: wrote to stdout`);
}

interface AccountJson {
  id: string;
  username: string;
  plan: string;
  status: string;
  references: string[] | null;
  origins: string[] | null;
  overrides: Record<string, unknown> | null;
}

interface KeyListJson {
  id: string;
  label: string | null;
  state: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

describe('nerkh CLI (SQLite in a temp data dir)', () => {
  const dir = tempDir('nerkh-cli-');
  const dataDir = join(dir.path, 'data');
  const run = (...args: string[]) => nerkh(args, { cwd: dir.path, env: { NERKH_DATA_DIR: dataDir } });
  const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  const fiftyOne = catalogue.popular.slice(0, 51).join(',');
  let shop: AccountJson;
  let board: { id: string; key: string };
  let plain: { id: string; key: string };

  before(() => {
    assert.ok(existsSync(COMPILED), 'dist/ is missing: run `npm run build` before the CLI tests');
  });
  after(() => dir.cleanup());

  it('--help works for the top level and every command', async () => {
    const commands = [
      [],
      ['serve'],
      ['accounts', 'add'],
      ['accounts', 'list'],
      ['accounts', 'set'],
      ['keys', 'issue'],
      ['keys', 'list'],
      ['keys', 'revoke'],
      ['plans', 'list'],
      ['usage'],
      ['demo-feed'],
    ];
    const results = await pool(commands, 2, (command) => run(...command, '--help'));
    commands.forEach((command, i) => {
      const label = ['nerkh', ...command, '--help'].join(' ');
      const out = ok(results[i]!, label);
      assert.ok(out.startsWith(`Usage: ${['nerkh', ...command].join(' ')}`), `${label}: ${out.split('\n')[0]}`);
      assert.match(out, /-h, --help/, label);
    });
    const top = results[0]!.stdout;
    for (const command of ['serve', 'accounts', 'keys', 'plans', 'usage', 'demo-feed']) assert.match(top, new RegExp(`^\\s+${command}\\b`, 'm'), `top-level help lists ${command}`);
    const help = (...command: string[]) => results[commands.findIndex((c) => c.join(' ') === command.join(' '))]!.stdout;
    assert.match(help('accounts', 'add'), /--plan <plan>/);
    const set = help('accounts', 'set');
    for (const option of ['--plan', '--status', '--references', '--origins', '--requests-per-minute', '--json']) assert.ok(set.includes(option), `accounts set --help lists ${option}`);
    assert.match(help('keys', 'issue'), /--label/);
    assert.match(help('keys', 'issue'), /--expires/);
    assert.match(help('usage'), /--days/);
    assert.ok(!existsSync(dataDir), '--help must not open the store');
    assert.match(top, new RegExp(`data directory: ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(from NERKH_DATA_DIR\\)`), 'top-level help names the data directory and where it came from');
    assert.match(top, /config file: +none, the built-in demo setup \(from built-in demo\)/);
  });

  it('admin commands refuse to create a store; once `serve` has made one, they use it', async () => {
    assertUserError(await run('accounts', 'add', 'shop1', '--plan', 'basic'), /no database at .*nerkh\.sqlite.*NERKH_DATA_DIR/, 'accounts add before any store');
    assert.ok(!existsSync(join(dataDir, 'nerkh.sqlite')), 'the refused command created a database');
    // What `nerkh serve` does first: open (and so create) the store.
    await (await Store.open({ databaseUrl: null, dataDir })).close();
  });

  it('accounts add creates accounts; accounts list --json lists them sorted by username', async () => {
    assert.equal(ok(await run('accounts', 'add', 'shop1', '--plan', 'basic')), 'account shop1 created on plan basic\n');
    const added = parse<AccountJson>(await run('accounts', 'add', 'alpha.shop', '--plan', 'enterprise', '--json'));
    assert.equal(added.username, 'alpha.shop');
    assert.equal(added.plan, 'enterprise');
    assert.equal(added.status, 'active');
    assert.equal(added.references, null);
    assert.match(added.id, /^acc_/);

    const list = parse<AccountJson[]>(await run('accounts', 'list', '--json'));
    assert.deepEqual(
      list.map((a) => [a.username, a.plan, a.status]),
      [
        ['alpha.shop', 'enterprise', 'active'],
        ['shop1', 'basic', 'active'],
      ],
    );
    shop = list[1]!;
  });

  it('accounts set changes references (aliases resolved), origins and overrides', async () => {
    const updated = parse<AccountJson>(
      await run('accounts', 'set', 'shop1', '--references', 'usd_free,sekkeh', '--origins', 'https://a.example', '--requests-per-minute', '100', '--json'),
    );
    assert.equal(updated.id, shop.id);
    assert.equal(updated.plan, 'basic');
    assert.deepEqual(updated.references, ['usd_free', 'coin_emami']);
    assert.deepEqual(updated.origins, ['https://a.example']);
    assert.deepEqual(updated.overrides, { requests_per_minute: 100 });
    const store = await Store.open({ databaseUrl: null, dataDir });
    try {
      assert.deepEqual(await store.accounts.find('shop1'), updated);
    } finally {
      await store.close();
    }
    const human = ok(await run('accounts', 'set', 'shop1', '--status', 'active'));
    assert.equal(human, 'account shop1 updated: plan basic, status active, references 2, origins https://a.example, overrides requests_per_minute=100\n');
    assert.doesNotMatch(human, /[{}"]/, 'human output is not JSON');

    // Run from another directory with no NERKH_DATA_DIR: refused, nothing created there.
    const elsewhere = join(dir.path, 'elsewhere');
    mkdirSync(elsewhere);
    const stray = await nerkh(['accounts', 'add', 'stray', '--plan', 'basic'], { cwd: elsewhere });
    assertUserError(stray, /no database at .*elsewhere\/var\/nerkh\.sqlite \(data directory from default \.\/var\)/, 'accounts add from another directory');
    assert.ok(!existsSync(join(elsewhere, 'var', 'nerkh.sqlite')), 'a stray store was created');
  });

  it('keys issue prints the key once; only its hash reaches the store', async () => {
    const [json, text] = await Promise.all([run('keys', 'issue', 'shop1', '--label', 'board', '--expires', '30d', '--json'), run('keys', 'issue', 'shop1')]);
    const issued = parse<{ id: string; key: string; username: string; label: string; created_at: string; expires_at: string }>(json);
    assert.match(issued.id, /^key_[0-9A-Za-z]+$/);
    assert.match(issued.key, KEY_FORMAT);
    assert.equal(issued.username, 'shop1');
    assert.equal(issued.label, 'board');
    assert.match(issued.expires_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    const span = Date.parse(issued.expires_at) - Date.parse(issued.created_at);
    assert.ok(Math.abs(span - 30 * DAY_MS) <= 1000, `expiry is 30 days after creation, got ${span} ms`);
    board = { id: issued.id, key: issued.key };

    const lines = ok(text).trimEnd().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^key key_[0-9A-Za-z]+ issued for shop1; .*not shown again/);
    assert.match(lines[1]!, KEY_FORMAT);
    plain = { id: /^key (key_[0-9A-Za-z]+)/.exec(lines[0]!)![1]!, key: lines[1]! };
    assert.notEqual(plain.key, board.key);

    // What the server would see: the hash, against the right account and expiry; never the key.
    const store = await Store.open({ databaseUrl: null, dataDir });
    try {
      const credentials = await store.keys.credentials();
      const found = credentials.find((c) => c.hash === hashKey(board.key));
      assert.ok(found, 'found');
      assert.equal(found.id, board.id);
      assert.equal(found.account_id, shop.id);
      assert.equal(Math.floor(found.expires_at! / 1000) * 1000, Date.parse(issued.expires_at));
      assert.equal(credentials.find((c) => c.hash === hashKey(plain.key))?.id, plain.id);
      const rows = await store.connection.db.selectFrom('api_keys').selectAll().execute();
      for (const secret of [board.key, plain.key]) assert.ok(rows.every((row) => Object.values(row).every((value) => !String(value).includes(secret.slice(4)))), 'rows.every((row) => Object.values(row).every((value) => !String(value).includes(secret.slice(4))))');
    } finally {
      await store.close();
    }
  });

  it('keys list --json lists the keys, never the keys themselves', async () => {
    const result = await run('keys', 'list', 'shop1', '--json');
    const list = parse<KeyListJson[]>(result);
    assert.deepEqual(list.map((k) => k.id).sort(), [board.id, plain.id].sort());
    for (const secret of [board.key, plain.key]) {
      assert.ok(!result.stdout.includes(secret.slice(4)), 'keys list prints a key');
      assert.ok(!result.stdout.includes(hashKey(secret)), 'keys list prints a hash');
    }
    for (const entry of list) {
      assert.ok(!('key' in entry) && !('hash' in entry), '!(\'key\' in entry) && !(\'hash\' in entry)');
      assert.equal(entry.state, 'active');
      assert.equal(entry.revoked_at, null);
    }
    const entry = list.find((k) => k.id === board.id)!;
    assert.equal(entry.label, 'board');
    assert.ok(entry.expires_at, 'entry.expires_at');
  });

  it('keys revoke revokes by public id, idempotently', async () => {
    assert.equal(ok(await run('keys', 'revoke', board.id)), `key ${board.id} revoked\n`);
    assert.deepEqual(parse(await run('keys', 'revoke', board.id, '--json')), { id: board.id, revoked: true, already_revoked: true });
    const store = await Store.open({ databaseUrl: null, dataDir });
    try {
      assert.ok((await store.keys.find(board.id))?.revoked_at, '(await store.keys.find(board.id))?.revoked_at');
      assert.equal((await store.keys.find(plain.id))?.revoked_at, null);
      const ids = (await store.keys.credentials()).map((c) => c.id);
      assert.ok(!ids.includes(board.id), '!ids.includes(board.id)');
      assert.ok(ids.includes(plain.id), 'ids.includes(plain.id)');
    } finally {
      await store.close();
    }
  });

  it('plans list --json gives the documented defaults (docs/api.md#plans)', async () => {
    const plans = parse<{ name: string; services: string[]; max_references: number | null; refresh_interval_seconds: number; requests_per_minute: number; requests_per_day: number | null; default_references: string[]; max_streams: number; max_stream_seconds: number; max_webhooks: number }[]>(
      await run('plans', 'list', '--json'),
    );
    const numbers = plans.map(({ name, services, max_references, refresh_interval_seconds, requests_per_minute, requests_per_day }) => ({
      name,
      services: [...services].sort(),
      max_references,
      refresh_interval_seconds,
      requests_per_minute,
      requests_per_day,
    }));
    assert.deepEqual(numbers, [
      { name: 'basic', services: ['catalogue', 'detail', 'usage'], max_references: 50, refresh_interval_seconds: 60, requests_per_minute: 60, requests_per_day: 10_000 },
      {
        name: 'pro',
        services: ['alerts', 'catalogue', 'detail', 'history', 'status', 'stream', 'usage', 'webservice'],
        max_references: 150,
        refresh_interval_seconds: 10,
        requests_per_minute: 600,
        requests_per_day: 200_000,
      },
      {
        name: 'enterprise',
        services: ['alerts', 'catalogue', 'detail', 'history', 'status', 'stream', 'usage', 'webservice'],
        max_references: null,
        refresh_interval_seconds: 1,
        requests_per_minute: 6_000,
        requests_per_day: null,
      },
    ]);
    assert.deepEqual(plans[0]!.default_references, catalogue.popular.slice(0, 50));
    assert.equal(plans[1]!.default_references.length, 150);
    assert.deepEqual(plans.map((plan) => [plan.max_streams, plan.max_stream_seconds]), [[0, 86_400], [5, 86_400], [100, 86_400]]);
    assert.deepEqual(plans.map((plan) => plan.max_webhooks), [0, 5, 50]);
    const table = ok(await run('plans', 'list'));
    const enterprise = table.split('\n\n').find((block) => block.startsWith('plan enterprise'));
    assert.ok(enterprise, table);
    assert.match(enterprise, /^\s+max_streams\s+100$/m);
    assert.match(enterprise, /^\s+max_stream_seconds\s+86400$/m);
    assert.match(enterprise, /^\s+max_webhooks\s+50$/m);
    assert.match(table.split('\n\n').find((block) => block.startsWith('plan basic'))!, /^\s+max_webhooks\s+0 \(no webhooks\)$/m);
  });

  it('usage --json reports what the store counted: per day, per service, recent errors', async () => {
    const time = new ZoneTime('Asia/Tehran');
    const now = Date.now();
    const store = await Store.open({ databaseUrl: null, dataDir });
    try {
      await store.usage.record(
        [
          { account_id: shop.id, key_id: plain.id, day: time.day(now), service: 'detail', ok: 7, errors: 3 },
          { account_id: shop.id, key_id: board.id, day: time.day(now), service: 'catalogue', ok: 5, errors: 0 },
          { account_id: shop.id, key_id: plain.id, day: time.day(now - 2 * DAY_MS), service: 'detail', ok: 4, errors: 1 },
          { account_id: shop.id, key_id: plain.id, day: time.day(now - 45 * DAY_MS), service: 'detail', ok: 1000, errors: 0 },
        ],
        [{ account_id: shop.id, key_id: plain.id, at: now - 60_000, service: 'detail', path: '/v1/rates/nope', http_status: 404, error: 'NOT_FOUND', count: 3 }],
      );
    } finally {
      await store.close();
    }
    const month = await run('usage', 'shop1', '--json');
    interface Report {
      account: string;
      plan: string;
      daily: { date: string; requests: number; errors: number }[];
      services: { service: string; requests: number; share: number }[];
      errors: { service: string; path: string; http_status: number; error: string; count: number }[];
    }
    const report = parse<Report>(month);
    assert.equal(report.account, 'shop1');
    assert.equal(report.plan, 'basic');
    assert.equal(report.daily.length, 30);
    assert.deepEqual(report.daily.at(-1), { date: time.day(now), requests: 15, errors: 3 });
    assert.deepEqual(report.daily.at(-3), { date: time.day(now - 2 * DAY_MS), requests: 5, errors: 1 });
    assert.equal(
      report.daily.reduce((sum, day) => sum + day.requests, 0),
      20,
      'days outside the range are not counted',
    );
    assert.deepEqual(report.services, [
      { service: 'detail', requests: 15, share: 0.75 },
      { service: 'catalogue', requests: 5, share: 0.25 },
    ]);
    assert.deepEqual(
      report.errors.map(({ service, path, http_status, error, count }) => ({ service, path, http_status, error, count })),
      [{ service: 'detail', path: '/v1/rates/nope', http_status: 404, error: 'NOT_FOUND', count: 3 }],
    );
    // The table shows the entry's count beside its error.
    const table = ok(await run('usage', 'shop1'));
    assert.match(table, /^at\s+service\s+http_status\s+error\s+count\s+path$/m);
    assert.match(table, /\sdetail\s+404\s+NOT_FOUND\s+3\s+\/v1\/rates\/nope$/m);
  });

  it('bad input: one "nerkh:" line on stderr, no stack trace, non-zero exit, nothing changed', async () => {
    const cases: [string[], RegExp][] = [
      [['accounts', 'add', 'shop9', '--plan', 'gold'], /unknown plan "gold"/],
      [['accounts', 'add', 'A!', '--plan', 'basic'], /invalid username "A!"/],
      [['accounts', 'add', 'shop1', '--plan', 'pro'], /account "shop1" already exists/],
      [['accounts', 'set', 'nobody', '--plan', 'pro'], /no account "nobody"/],
      [['keys', 'revoke', 'key_doesnotexist'], /no key "key_doesnotexist"/],
      [['keys', 'issue', 'shop1', '--expires', 'yesterday'], /invalid --expires "yesterday"/],
      [['keys', 'issue', 'shop1', '--expires', '2001-01-01'], /2001-01-01 is in the past/],
      [['accounts', 'set', 'shop1', '--status', 'paused'], /invalid status "paused"/],
      [['accounts', 'set', 'shop1', '--references', 'usd_free,not_a_reference'], /unknown reference "not_a_reference"/],
      [['accounts', 'set', 'shop1', '--references', fiftyOne], /51 references selected but the plan allows 50/],
      [['usage', 'shop1', '--days', '0'], /invalid --days "0"/],
      [['frob'], /unknown command 'frob'/],
    ];
    const results = await pool(cases, 2, ([args]) => run(...args));
    cases.forEach(([args, pattern], i) => assertUserError(results[i]!, pattern, `nerkh ${args.join(' ').slice(0, 80)}`));

    // None of it changed the store.
    const store = await Store.open({ databaseUrl: null, dataDir });
    try {
      assert.deepEqual(
        (await store.accounts.list()).map((a) => a.username),
        ['alpha.shop', 'shop1'],
      );
      const after = (await store.accounts.find('shop1'))!;
      assert.deepEqual(
        { plan: after.plan, status: after.status, references: after.references, origins: after.origins, overrides: after.overrides },
        { plan: 'basic', status: 'active', references: ['usd_free', 'coin_emami'], origins: ['https://a.example'], overrides: { requests_per_minute: 100 } },
      );
      assert.equal((await store.keys.list(shop.id)).length, 2);
    } finally {
      await store.close();
    }
  });

  describe('config file', () => {
    const configDir = join(dir.path, 'config');
    const withConfig = (name: string, content: string, ...args: string[]) => {
      mkdirSync(configDir, { recursive: true });
      const path = join(configDir, name);
      writeFileSync(path, content);
      return nerkh(args, { cwd: dir.path, env: { NERKH_DATA_DIR: join(dir.path, `data-${name}`), NERKH_CONFIG: path } });
    };

    it('a bad field stops the command with a message naming the field', async () => {
      const [missingPath, unknownField] = await Promise.all([
        withConfig('missing-path.json', JSON.stringify({ sources: [{ name: 'a', type: 'file' }] }), 'plans', 'list'),
        withConfig('unknown-field.json', JSON.stringify({ sourcez: [] }), 'plans', 'list'),
      ]);
      assertUserError(missingPath, /sources\[0\]\.path/, 'missing sources[0].path');
      assertUserError(unknownField, /sourcez/, 'unknown field');
    });

    it('configured plans are merged over the defaults', async () => {
      const result = await withConfig('plans.json', JSON.stringify({ plans: { basic: { requests_per_minute: 90 }, gold: { services: ['catalogue'] } } }), 'plans', 'list', '--json');
      const plans = parse<{ name: string; services: string[]; max_references: number | null; requests_per_minute: number; requests_per_day: number | null }[]>(result);
      const basic = plans.find((p) => p.name === 'basic');
      assert.equal(basic?.requests_per_minute, 90);
      assert.equal(basic?.requests_per_day, 10_000);
      assert.equal(basic?.max_references, 50);
      assert.deepEqual(
        plans.map((p) => p.name),
        ['basic', 'pro', 'enterprise', 'gold'],
      );
      assert.deepEqual(plans.find((p) => p.name === 'gold')?.services, ['catalogue']);
    });
  });

  describe('reference limit with per-account overrides', () => {
    before(async () => {
      const store = await Store.open({ databaseUrl: null, dataDir });
      try {
        await store.accounts.create('over', 'basic');
      } finally {
        await store.close();
      }
    });

    it(
      'an "unlimited" --max-references override allows more references than the plan',
      async () => {
        const updated = parse<AccountJson>(await run('accounts', 'set', 'over', '--max-references', 'unlimited', '--references', fiftyOne, '--json'));
        assert.equal(updated.references?.length, 51);
        assert.deepEqual(updated.overrides, { max_references: null });
      },
    );

    it('a numeric --max-references override raises the limit', async () => {
      const updated = parse<AccountJson>(await run('accounts', 'set', 'over', '--max-references', '60', '--references', fiftyOne, '--json'));
      assert.equal(updated.references?.length, 51);
      assert.deepEqual(updated.overrides, { max_references: 60 });
    });

    it(
      '--clear-overrides is refused while the selection exceeds the plan limit',
      async () => {
        assertUserError(await run('accounts', 'set', 'over', '--clear-overrides'), /51 references selected but the plan allows 50/, 'clear overrides');
      },
    );
  });

  it(
    'keys issue rejects an impossible calendar date for --expires',
    async () => {
      assertUserError(await run('keys', 'issue', 'alpha.shop', '--expires', '2027-02-31'), /--expires/, 'expires 2027-02-31');
    },
  );
});
