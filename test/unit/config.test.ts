import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BUNDLED_CATALOGUE, ConfigError, DEMO_SOURCE_NAMES, loadConfig } from '../../src/config.js';
import { tempDir } from '../support/env.js';

const root = tempDir('nerkh-config-');
let count = 0;
after(() => root.cleanup());

/** A fresh working folder, optionally with a config file in it. */
function workdir(config?: unknown, name = 'nerkh.config.json'): string {
  const dir = join(root.path, `w${count++}`);
  mkdirSync(dir, { recursive: true });
  if (config !== undefined) writeFileSync(join(dir, name), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

function rejects(run: () => unknown, ...parts: string[]): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${String(error)}`);
    for (const part of parts) assert.ok(error.message.includes(part), `"${error.message}" lacks "${part}"`);
    return true;
  });
}

const fileSource = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'file', path: `${name}.json`, ...extra });

describe('loadConfig defaults', () => {
  it('runs the demo setup with no config file', () => {
    const cwd = workdir();
    const config = loadConfig({}, cwd);
    assert.equal(config.demo, true);
    assert.equal(config.configPath, null);
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.timezone, 'Asia/Tehran');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.databaseUrl, null);
    assert.equal(config.redisUrl, null);
    assert.equal(config.redisPrefix, 'nerkh:');
    assert.equal(config.dataDir, join(cwd, 'var'));
    assert.equal(config.cataloguePath, BUNDLED_CATALOGUE);
    assert.deepEqual(config.sourcePriority, {});
    assert.deepEqual(config.plans, {});
    assert.equal(config.sources.length, 3);
    assert.deepEqual(
      config.sources.map((s) => s.name),
      [...DEMO_SOURCE_NAMES],
    );
    for (const source of config.sources) {
      assert.equal(source.type, 'file');
      assert.equal(source.path, join(cwd, 'var', 'demo', `${source.name}.json`));
    }
  });

  it('reads the environment', () => {
    const cwd = workdir();
    const config = loadConfig(
      { NERKH_PORT: '9090', NERKH_HOST: '0.0.0.0', NERKH_DATA_DIR: 'state', NERKH_LOG_LEVEL: 'warn', NERKH_DATABASE_URL: 'postgres://x/y', NERKH_REDIS_URL: 'redis://r', NERKH_REDIS_PREFIX: 'shop-a:' },
      cwd,
    );
    assert.equal(config.port, 9090);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, join(cwd, 'state'));
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.databaseUrl, 'postgres://x/y');
    assert.equal(config.redisUrl, 'redis://r');
    assert.equal(config.redisPrefix, 'shop-a:');
    assert.equal(config.sources[0]!.path, join(cwd, 'state', 'demo', 'demo-alpha.json'));
  });

  it('treats empty environment values as unset', () => {
    const config = loadConfig({ NERKH_PORT: '', NERKH_HOST: '', NERKH_LOG_LEVEL: '' }, workdir());
    assert.equal(config.port, 8080);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.logLevel, 'info');
  });

  it('accepts port 0', () => {
    assert.equal(loadConfig({ NERKH_PORT: '0' }, workdir()).port, 0);
  });
});

describe('loadConfig with a config file', () => {
  it('reads sources from NERKH_CONFIG, resolving paths against the file', () => {
    const cwd = workdir();
    const etc = join(cwd, 'etc');
    mkdirSync(etc);
    writeFileSync(
      join(etc, 'custom.json'),
      JSON.stringify({
        sources: [fileSource('alpha', { max_age_seconds: 60, poll_seconds: 2 }), { name: 'remote', type: 'http', url: 'https://example.test/feed.json', timeout_seconds: 3 }],
        source_priority: { usd_free: ['remote', 'alpha'] },
        catalogue: 'refs',
        timezone: 'Europe/Berlin',
        plans: { basic: { requests_per_minute: 10 } },
      }),
    );
    const config = loadConfig({ NERKH_CONFIG: 'etc/custom.json' }, cwd);
    assert.equal(config.demo, false);
    assert.equal(config.configPath, join(etc, 'custom.json'));
    assert.equal(config.timezone, 'Europe/Berlin');
    assert.equal(config.cataloguePath, join(etc, 'refs'));
    assert.deepEqual(config.sourcePriority, { usd_free: ['remote', 'alpha'] });
    assert.deepEqual(config.plans, { basic: { requests_per_minute: 10 } });
    assert.deepEqual(config.sources, [
      { name: 'alpha', type: 'file', path: join(etc, 'alpha.json'), url: undefined, max_age_seconds: 60, poll_seconds: 2, timeout_seconds: 5 },
      { name: 'remote', type: 'http', path: undefined, url: 'https://example.test/feed.json', max_age_seconds: 300, poll_seconds: 10, timeout_seconds: 3, max_backoff_seconds: 30 },
    ]);
  });

  it('caps an http source back-off at max(poll_seconds, 30 s) unless max_backoff_seconds says otherwise', () => {
    const http = (name: string, extra: Record<string, unknown> = {}) => ({ name, type: 'http', url: `http://127.0.0.1:9/${name}`, ...extra });
    const config = loadConfig({}, workdir({ sources: [http('slow', { poll_seconds: 120 }), http('quick', { poll_seconds: 2 }), http('set', { poll_seconds: 2, max_backoff_seconds: 8 }), http('tiny', { poll_seconds: 0.5, max_backoff_seconds: 0.5 })] }));
    assert.deepEqual(
      config.sources.map((s) => [s.name, s.max_backoff_seconds]),
      [['slow', 120], ['quick', 30], ['set', 8], ['tiny', 0.5]],
    );
  });

  it('finds nerkh.config.json in the working folder', () => {
    const cwd = workdir({ sources: [fileSource('only')] });
    const config = loadConfig({}, cwd);
    assert.equal(config.configPath, join(cwd, 'nerkh.config.json'));
    assert.equal(config.demo, false);
    assert.deepEqual(
      config.sources.map((s) => [s.name, s.path, s.max_age_seconds, s.poll_seconds]),
      [['only', join(cwd, 'only.json'), 300, 1]],
    );
  });

  it('keeps the demo sources when the file names none', () => {
    const config = loadConfig({}, workdir({ timezone: 'UTC' }));
    assert.equal(config.demo, true);
    assert.equal(config.sources.length, 3);
    assert.equal(config.timezone, 'UTC');
  });
});

describe('loadConfig errors name the field', () => {
  const load = (config: unknown, env: NodeJS.ProcessEnv = {}) => () => loadConfig(env, workdir(config));

  it('an unknown top-level field', () => {
    rejects(load({ sources: [fileSource('a')], colour: 'blue' }), 'colour');
  });

  it('a negative max_age_seconds of the second source', () => {
    rejects(load({ sources: [fileSource('a'), fileSource('b', { max_age_seconds: -5 })] }), 'sources[1].max_age_seconds');
  });

  it('an unknown field on a source', () => {
    rejects(load({ sources: [fileSource('a', { mtime: true })] }), 'sources[0].mtime');
  });

  it('a bad source type', () => {
    rejects(load({ sources: [fileSource('a', { type: 'ftp' })] }), 'sources[0].type');
  });

  it('a file source without a path', () => {
    rejects(load({ sources: [fileSource('a'), { name: 'b', type: 'file' }] }), 'sources[1].path', 'required');
  });

  it('an http source without a url, or with a path', () => {
    rejects(load({ sources: [{ name: 'r', type: 'http' }] }), 'sources[0].url');
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'http://x.test/', path: 'x.json' }] }), 'sources[0].path');
  });

  it('a url that is not http(s)', () => {
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'ftp://x.test/' }] }), 'sources[0].url');
  });

  it('a max_backoff_seconds that is not a positive number, below poll_seconds, or on a file source', () => {
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'http://x.test/', max_backoff_seconds: 0 }] }), 'sources[0].max_backoff_seconds');
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'http://x.test/', max_backoff_seconds: '30' }] }), 'sources[0].max_backoff_seconds');
    rejects(load({ sources: [fileSource('a'), { name: 'r', type: 'http', url: 'http://x.test/', poll_seconds: 60, max_backoff_seconds: 30 }] }), 'sources[1].max_backoff_seconds', 'at least poll_seconds (60)');
    rejects(load({ sources: [fileSource('a', { max_backoff_seconds: 30 })] }), 'sources[0].max_backoff_seconds', 'not allowed on a file source');
  });

  it('a duplicate source name', () => {
    rejects(load({ sources: [fileSource('a'), fileSource('b'), fileSource('a', { path: 'other.json' })] }), 'sources[2].name', 'duplicate', '"a"');
  });

  it('source_priority naming an unknown source', () => {
    rejects(load({ sources: [fileSource('a'), fileSource('b')], source_priority: { usd_free: ['b', 'zeta'] } }), 'source_priority.usd_free[1]', '"zeta"');
  });

  it('source_priority naming a demo source without sources configured works', () => {
    assert.deepEqual(loadConfig({}, workdir({ source_priority: { usd_free: ['demo-beta'] } })).sourcePriority, { usd_free: ['demo-beta'] });
  });

  it('a bad timezone', () => {
    rejects(load({ timezone: 'Mars/Olympus_Mons' }), 'timezone', 'Mars/Olympus_Mons');
  });

  it('a bad plan field', () => {
    rejects(load({ plans: { basic: { requests_per_minute: 0 } } }), 'plans.basic.requests_per_minute');
  });

  it('a bad screening field, naming it', () => {
    rejects(load({ screening: { usd_free: { max_jump_percent: -5 } } }), 'screening.usd_free.max_jump_percent');
    rejects(load({ screening: { usd_free: { max_jump_percent: 'ten' } } }), 'screening.usd_free.max_jump_percent');
    rejects(load({ screening: { usd_free: { confirm_seconds: 1.5 } } }), 'screening.usd_free.confirm_seconds');
    rejects(load({ screening: { usd_free: { max_jump: 10 } } }), 'screening.usd_free', 'max_jump');
  });

  it('reads screening as given', () => {
    const screening = { '*': { outlier_mads: 4 }, usd_free: { max_jump_percent: 10, confirm_seconds: 60 } };
    assert.deepEqual(loadConfig({}, workdir({ screening })).screening, screening);
  });

  it('invalid JSON, naming the file', () => {
    rejects(load('{"sources": ['), 'nerkh.config.json', 'invalid JSON');
  });

  it('a missing NERKH_CONFIG file', () => {
    rejects(() => loadConfig({ NERKH_CONFIG: 'nope.json' }, workdir()), 'cannot read', 'nope.json');
  });

  it('NERKH_PORT that is not an integer in range', () => {
    rejects(load(undefined, { NERKH_PORT: 'abc' }), 'NERKH_PORT', '"abc"');
    rejects(load(undefined, { NERKH_PORT: '70000' }), 'NERKH_PORT');
    rejects(load(undefined, { NERKH_PORT: '80.5' }), 'NERKH_PORT');
    rejects(load(undefined, { NERKH_PORT: '-1' }), 'NERKH_PORT');
  });

  it('an unknown NERKH_LOG_LEVEL', () => {
    rejects(load(undefined, { NERKH_LOG_LEVEL: 'loud' }), 'NERKH_LOG_LEVEL', '"loud"');
  });

  it('a NERKH_REDIS_PREFIX with characters a key pattern would misread', () => {
    rejects(load(undefined, { NERKH_REDIS_PREFIX: 'nerkh*' }), 'NERKH_REDIS_PREFIX', '"nerkh*"');
    rejects(load(undefined, { NERKH_REDIS_PREFIX: 'a b' }), 'NERKH_REDIS_PREFIX');
  });
});
