/**
 * The demo account (a key printed once, on `pro`) belongs to the built-in
 * setup only. A deployment with a config file makes its own accounts, even
 * when its config names no sources and the demo sources keep it moving.
 * Every start that prints no key prints the commands that make one, and they
 * work as printed, run from the server's directory with its environment.
 * The zero-config start that does print a key is in failover.test.ts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, runCli, startServer, type ServerProcess } from './helpers.js';

/** The commands a start printed, one a line under its hint, without `node …/bin/nerkh.js`; waits for the last (`keys issue`). */
async function printedCommands(server: ServerProcess): Promise<string[][]> {
  await pollUntil(async () => server.stdout, (out) => /^ {4}node \S*bin\/nerkh\.js keys issue \S+$/m.test(out), 10_000, 50, () => server.output());
  return [...server.stdout.matchAll(/^ {4}node \S*bin\/nerkh\.js (.+)$/gm)].map((match) => match[1]!.split(' '));
}

/** Run the printed commands as a person would, from `cwd` with the server's environment; returns the key the last one printed. */
async function runPrinted(commands: string[][], env: Record<string, string>, cwd: string): Promise<string> {
  let output = '';
  for (const args of commands) {
    const result = await runCli(cleanEnv(env), args, 20_000, cwd);
    assert.equal(result.code, 0, `nerkh ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    output = result.stdout;
  }
  const key = /nrk_[0-9A-Za-z]{32}/.exec(output)?.[0];
  assert.ok(key, `no key in: ${output}`);
  return key;
}

/** The key answers on the running server (its directory picks new keys up within a second). */
async function assertKeyWorks(server: ServerProcess, key: string): Promise<void> {
  const answer = await pollUntil(() => get(server.base, '/v1/rates/usd_free', key), (r) => r.status === 200, 5000, 100, (r) => `${r.status} ${r.text.slice(0, 200)}`);
  assert.equal((answer.value.json as { rates: { key: string }[] }).rates[0]!.key, 'usd_free');
}

describe('no demo account in a deployment that has a config', () => {
  const dataDir = tempDir('nerkh-e2e-config-data-');
  const cwd = tempDir('nerkh-e2e-config-cwd-');
  const configPath = join(cwd.path, 'nerkh.config.json');
  const env = { NERKH_DATA_DIR: dataDir.path, NERKH_CONFIG: configPath };
  let server: ServerProcess;

  before(async () => {
    assertBuilt();
    // Plans only: the demo sources still run, as the built-in setup's would.
    writeFileSync(configPath, JSON.stringify({ plans: { basic: { services: ['detail'], requests_per_minute: 60, requests_per_day: 1000, refresh_interval_seconds: 0 } } }));
    server = await startServer(env, { cwd: cwd.path });
  });

  after(async () => {
    await server?.kill();
    dataDir.cleanup();
    cwd.cleanup();
  });

  it('prints no key, says how to make one, and creates no account', async () => {
    await pollUntil(() => get(server.base, '/healthz'), (r) => r.status === 200, 5000);
    // What a start prints comes in one go after "listening": once its last line is here, a key would be too.
    await pollUntil(async () => server.stdout, (out) => /no demo account with a config file/.test(out), 5000, 50, () => server.output());
    assert.doesNotMatch(server.stdout, /nrk_[0-9A-Za-z]{32}/, server.output());
    assert.match(server.stdout, /no demo account with a config file/, server.output());
    assert.match(server.stdout, /demo sources under/, 'the demo sources still run');
    const listed = await cliOk(cleanEnv(env), ['accounts', 'list', '--json']);
    assert.deepEqual(JSON.parse(listed.stdout), []);
  });

  it('prints the two commands that make an account on the config’s first plan and a key, and they work as printed', async () => {
    const commands = await printedCommands(server);
    assert.deepEqual(commands, [
      ['accounts', 'add', 'my-app', '--plan', 'basic'],
      ['keys', 'issue', 'my-app'],
    ]);
    await assertKeyWorks(server, await runPrinted(commands, env, cwd.path));
  });
});

describe('the built-in setup on a store that already has accounts', () => {
  const dataDir = tempDir('nerkh-e2e-builtin-data-');
  const cwd = tempDir('nerkh-e2e-builtin-cwd-');
  const env = { NERKH_DATA_DIR: dataDir.path };
  const servers: ServerProcess[] = [];

  before(() => assertBuilt());
  after(async () => {
    for (const server of servers) await server.kill();
    dataDir.cleanup();
    cwd.cleanup();
  });

  it('with accounts of its own and no demo account, prints the commands that make one, which work', async () => {
    // Only `serve` creates a store: make it as serve does, then an account of the operator's own.
    await (await Store.open({ databaseUrl: null, dataDir: dataDir.path })).close();
    await cliOk(cleanEnv(env), ['accounts', 'add', 'my-app', '--plan', 'basic']);
    const server = await startServer(env, { cwd: cwd.path });
    servers.push(server);
    const commands = await printedCommands(server);
    assert.match(server.stdout, /no key printed \(accounts already exist in /, server.output());
    // `my-app` is taken: the next free name, on the demo's plan.
    assert.deepEqual(commands, [
      ['accounts', 'add', 'my-app-2', '--plan', 'pro'],
      ['keys', 'issue', 'my-app-2'],
    ]);
    await assertKeyWorks(server, await runPrinted(commands, env, cwd.path));
    await server.stop();
  });

  it('once the demo account exists, a restart prints the one command that issues it a key, which works', async () => {
    const fresh = tempDir('nerkh-e2e-builtin-demo-');
    const freshEnv = { NERKH_DATA_DIR: fresh.path };
    try {
      const first = await startServer(freshEnv, { cwd: cwd.path });
      servers.push(first);
      await pollUntil(async () => first.stdout, (out) => /nrk_[0-9A-Za-z]{32}/.test(out), 10_000, 50, () => first.output());
      assert.equal((await first.stop()).exit?.code, 0, first.output());
      const again = await startServer(freshEnv, { cwd: cwd.path });
      servers.push(again);
      const commands = await printedCommands(again);
      assert.deepEqual(commands, [['keys', 'issue', 'demo']]);
      assert.doesNotMatch(again.stdout, /nrk_[0-9A-Za-z]{32}/, 'no key printed on a restart');
      await assertKeyWorks(again, await runPrinted(commands, freshEnv, cwd.path));
      await again.stop();
    } finally {
      fresh.cleanup();
    }
  });
});
