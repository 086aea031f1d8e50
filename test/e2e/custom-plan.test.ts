/**
 * A plan named only in the config file, on a real server: listing `stream`
 * is enough to open streams (pro's allowance, as `nerkh plans list` shows);
 * a plan or account allowed no streams is told so, and which field allows them.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStream } from '../stream/sse-client.js';
import { tempDir } from '../support/env.js';
import { SAMPLE, SAMPLE_VALUES } from '../support/harness.js';
import { assertBuilt, cleanEnv, cliOk, pollUntil, startServer, type ServerProcess } from './helpers.js';

assertBuilt();

describe('a custom plan from the config file, on a real server', () => {
  const dir = tempDir('nerkh-custom-plan-');
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  const keys: Record<string, string> = {};

  before(async () => {
    writeFileSync(join(dir.path, 'alpha.json'), JSON.stringify({ items: { [SAMPLE.usd_free]: SAMPLE_VALUES.usd_free }, updated_at: new Date().toISOString() }));
    const config = {
      sources: [{ name: 'alpha', type: 'file', path: 'alpha.json', max_age_seconds: 3600 }],
      plans: { board: { services: ['detail', 'stream'] }, mute: { services: ['detail', 'stream'], max_streams: 0 } },
    };
    writeFileSync(join(dir.path, 'nerkh.config.json'), JSON.stringify(config));
    env = cleanEnv({ NERKH_CONFIG: join(dir.path, 'nerkh.config.json'), NERKH_DATA_DIR: join(dir.path, 'var'), NERKH_LOG_LEVEL: 'warn' });
    server = await startServer(env as Record<string, string>);
    for (const [username, plan] of [['screen', 'board'], ['quiet', 'mute'], ['lobby', 'board']]) {
      await cliOk(env, ['accounts', 'add', username!, '--plan', plan!]);
      keys[username!] = (JSON.parse((await cliOk(env, ['keys', 'issue', username!, '--json'])).stdout) as { key: string }).key;
    }
    // The keys reach the server's directory within its poll.
    await pollUntil(() => fetch(`${server.base}/v1/rates/usd_free`, { headers: { 'x-api-key': keys.lobby! } }).then((r) => r.status), (status) => status === 200, 10_000);
  });
  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('`plans list` shows every field of the custom plan, max_streams at pro’s 5', async () => {
    const listed = await cliOk(env, ['plans', 'list']);
    const board = listed.stdout.split('\n\n').find((block) => block.startsWith('plan board\n'));
    assert.ok(board, listed.stdout);
    for (const field of ['services', 'max_references', 'default_references', 'refresh_interval_seconds', 'requests_per_minute', 'requests_per_day', 'history_days', 'max_streams']) {
      assert.match(board, new RegExp(`^  ${field} +\\S`, 'm'), `plans list shows ${field}:\n${board}`);
    }
    assert.match(board, /^ {2}max_streams +5$/m);
    assert.match(board, /^ {2}services +detail, stream$/m);
    const mute = listed.stdout.split('\n\n').find((block) => block.startsWith('plan mute\n'))!;
    assert.match(mute, /^ {2}max_streams +0 \(no streams\)$/m);
  });

  it('an account on it opens a stream and gets its first event', async () => {
    const stream = await openStream(server.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.screen! });
    try {
      assert.equal(stream.status, 200, stream.body);
      const first = await stream.event(0, 10_000);
      assert.match(first.data, /"usd_free"/);
    } finally {
      stream.close();
    }
  });

  it('a plan allowed no streams says so, and names the field that allows them', async () => {
    const stream = await openStream(server.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.quiet! });
    assert.equal(stream.status, 429, stream.body);
    const body = JSON.parse(stream.body) as { error: string; message: string };
    assert.equal(body.error, 'TOO_MANY_STREAMS');
    assert.match(body.message, /^Your plan allows no streams/);
    assert.match(body.message, /plans\.mute\.max_streams/);
    assert.match(body.message, /nerkh accounts set quiet --max-streams/);
    assert.doesNotMatch(body.message, /already holds/);
  });

  it('an account overridden to no streams is told the same; overridden back, it streams', async () => {
    await cliOk(env, ['accounts', 'set', 'lobby', '--max-streams', '0']);
    const refused = await pollUntil(
      () => openStream(server.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.lobby! }),
      (stream) => {
        if (stream.status === 200) stream.close();
        return stream.status === 429;
      },
      10_000,
      100,
      (stream) => `${stream.status} ${stream.body}`,
    );
    assert.match(refused.value.body, /Your plan allows no streams/);
    await cliOk(env, ['accounts', 'set', 'lobby', '--max-streams', '2']);
    const open = await pollUntil(
      () => openStream(server.base, '/v1/stream?keys=usd_free', { 'x-api-key': keys.lobby! }),
      (stream) => stream.status === 200,
      10_000,
      100,
      (stream) => `${stream.status} ${stream.body}`,
    );
    open.value.close();
  });
});
