/**
 * @nerkh/client's stream still obeys its signal, and its idle timeout, after a
 * garbage collection. Each case runs in a child node with --expose-gc
 * (stream-gc-child.ts) against a real `nerkh serve` whose values change every
 * 300 ms, so a connection that was not closed keeps delivering events, and
 * whose plan allows one stream, so one that was not closed holds the slot.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../src/store/store.js';
import { tempDir, writeSource } from '../support/env.js';
import { assertBuilt, catalogueSourceKeys, cliJson, cliOk, startServer, type ServerProcess } from '../e2e/access-helpers.js';

const CHILD = fileURLToPath(new URL('./stream-gc-child.ts', import.meta.url));
const run = promisify(execFile);

interface ChildReport {
  ended: boolean;
  endedMs: number | null;
  later: { type: string; ms: number }[];
  reopened: string | null;
}

describe('@nerkh/client stream after a garbage collection', { timeout: 90_000 }, () => {
  const tmp = tempDir('nerkh-client-gc-');
  const dataDir = join(tmp.path, 'data');
  const sourcePath = join(tmp.path, 'sources', 'alpha.json');
  const configPath = join(tmp.path, 'nerkh.config.json');
  const sourceKeys = catalogueSourceKeys();
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('NERKH_') && name !== 'NODE_TEST_CONTEXT')),
    NERKH_HOST: '127.0.0.1',
    NERKH_DATA_DIR: dataDir,
    NERKH_CONFIG: configPath,
  };
  let server: ServerProcess;
  let key: string;
  let ticker: NodeJS.Timeout;
  let usd = 1_030_000;
  // usd_free moves every 300 ms; eur_free never does (a silent stream).
  const writeValues = () => {
    usd += 100;
    const now = new Date().toISOString();
    writeSource(sourcePath, { [sourceKeys.get('usd_free')!]: { value: usd, updated_at: now }, [sourceKeys.get('eur_free')!]: { value: 1_120_000, updated_at: '2026-01-01T00:00:00Z' } });
  };

  before(async () => {
    assertBuilt();
    mkdirSync(join(tmp.path, 'sources'), { recursive: true });
    writeValues();
    writeFileSync(configPath, JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 1_000_000_000, poll_seconds: 0.1 }], plans: { live: { services: ['detail', 'stream'], refresh_interval_seconds: 0, max_streams: 1 } } }));
    await (await Store.open({ databaseUrl: null, dataDir })).close();
    await cliOk(env, ['accounts', 'add', 'watcher', '--plan', 'live']);
    key = (await cliJson<{ key: string }>(env, ['keys', 'issue', 'watcher'])).key;
    server = await startServer(env, 0);
    ticker = setInterval(writeValues, 300);
  });
  after(() => {
    clearInterval(ticker);
    server?.kill();
    tmp.cleanup();
  });

  const child = async (mode: 'abort' | 'idle', reference: string): Promise<ChildReport> => {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD, server.base, key, mode, reference], { env, timeout: 30_000 });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildReport;
  };

  it('abort() after gc(): no further event, the iteration ends at once, and the connection closes', async () => {
    const report = await child('abort', 'usd_free');
    assert.deepEqual(report.later, [], `events after abort: ${JSON.stringify(report.later)}`);
    assert.equal(report.ended, true, 'the iteration did not end within 12 s of abort');
    assert.ok(report.endedMs! < 1000, `ended ${report.endedMs} ms after abort`);
    // The plan allows one stream: a second opens only once the server has seen the first connection go.
    assert.equal(report.reopened, 'snapshot');
  });

  it('the idle timeout after gc(): the silent connection is replaced (a new snapshot after the retry delay)', async () => {
    const report = await child('idle', 'eur_free');
    assert.equal(report.ended, true, `no replacement connection within 12 s: ${JSON.stringify(report)}`);
    assert.deepEqual(report.later.map((event) => event.type), ['snapshot']);
    // 500 ms of silence, then the server's 3 s retry delay.
    assert.ok(report.later[0]!.ms >= 3000 && report.later[0]!.ms < 8000, `replaced after ${report.later[0]!.ms} ms`);
  });
});
