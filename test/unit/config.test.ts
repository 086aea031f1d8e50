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

  it('sheds past 250 ms of event-loop lag unless NERKH_SHED_AFTER_LAG_MS says otherwise', () => {
    assert.equal(loadConfig({}, workdir()).shedAfterLagMs, 250);
    assert.equal(loadConfig({ NERKH_SHED_AFTER_LAG_MS: '2000' }, workdir()).shedAfterLagMs, 2000);
  });

  it('sheds a dominant caller past a 90 % busy event loop unless NERKH_SHED_AT_BUSY_PERCENT says otherwise', () => {
    assert.equal(loadConfig({}, workdir()).shedAtBusyPercent, 90);
    assert.equal(loadConfig({ NERKH_SHED_AT_BUSY_PERCENT: '100' }, workdir()).shedAtBusyPercent, 100);
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
      { name: 'alpha', type: 'file', path: join(etc, 'alpha.json'), url: undefined, max_age_seconds: 60, poll_seconds: 2, timeout_seconds: 5, max_bytes: 16 * 1024 * 1024, clock_skew_seconds: 30, format: { kind: 'nerkh' } },
      {
        name: 'remote',
        type: 'http',
        path: undefined,
        url: 'https://example.test/feed.json',
        max_age_seconds: 300,
        poll_seconds: 10,
        timeout_seconds: 3,
        max_backoff_seconds: 30,
        max_bytes: 16 * 1024 * 1024,
        clock_skew_seconds: 30,
        format: { kind: 'nerkh' },
        follow_redirects: false,
        allow_insecure: false,
      },
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

  it('a bad source type, listing the choices', () => {
    rejects(load({ sources: [fileSource('a'), fileSource('b'), fileSource('c', { type: 'htp' })] }), 'sources[2].type: "htp" is not one of: file, http, manual');
    rejects(load({ sources: [fileSource('a', { type: 3 })] }), 'sources[0].type: 3 is not one of: file, http, manual');
    rejects(load({ sources: [{ name: 'a', path: 'a.json' }] }), 'sources[0].type: required, one of: file, http, manual');
  });

  it('any other choice lists its choices too, and a value-or-null union says both', () => {
    rejects(load({ plans: { pro: { services: ['detail', 'streams'] } } }), 'plans.pro.services[1]: "streams" is not one of: catalogue, detail, status, webservice, usage, history, stream');
    rejects(load({ plans: { pro: { max_references: 0 } } }), 'plans.pro.max_references: 0 is not valid: expected integer to be greater or equal to 1, or null');
  });

  it('a file source without a path', () => {
    rejects(load({ sources: [fileSource('a'), { name: 'b', type: 'file' }] }), 'sources[1].path', 'required');
  });

  it('an http source without a url, or with a path', () => {
    rejects(load({ sources: [{ name: 'r', type: 'http' }] }), 'sources[0].url');
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'https://x.test/', path: 'x.json' }] }), 'sources[0].path');
  });

  it('a url that is not http(s)', () => {
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'ftp://x.test/' }] }), 'sources[0].url');
  });

  it('a max_backoff_seconds that is not a positive number, below poll_seconds, or on a file source', () => {
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'https://x.test/', max_backoff_seconds: 0 }] }), 'sources[0].max_backoff_seconds');
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'https://x.test/', max_backoff_seconds: '30' }] }), 'sources[0].max_backoff_seconds');
    rejects(load({ sources: [fileSource('a'), { name: 'r', type: 'http', url: 'https://x.test/', poll_seconds: 60, max_backoff_seconds: 30 }] }), 'sources[1].max_backoff_seconds', 'at least poll_seconds (60)');
    rejects(load({ sources: [fileSource('a', { max_backoff_seconds: 30 })] }), 'sources[0].max_backoff_seconds', 'not allowed on a file source');
  });

  it('plain http:// to a host that is not loopback, unless allow_insecure: refused at load, naming the source', () => {
    rejects(load({ sources: [fileSource('a'), { name: 'remote', type: 'http', url: 'http://rates.example.test/feed.json' }] }), 'sources[1].url', 'source "remote"', 'plain http:// is allowed only to a loopback host', 'allow_insecure');
    rejects(load({ sources: [{ name: 'ip', type: 'http', url: 'http://10.0.0.7:8080/feed' }] }), 'sources[0].url', 'loopback');
    rejects(load({ sources: [{ name: 'bad', type: 'http', url: 'http://[nope/' }] }), 'sources[0].url', 'not a valid URL');
    const allowed = loadConfig(
      {},
      workdir({
        sources: [
          { name: 'tls', type: 'http', url: 'https://rates.example.test/feed.json' },
          { name: 'local', type: 'http', url: 'http://127.0.0.1:9000/feed' },
          { name: 'local6', type: 'http', url: 'http://[::1]:9000/feed' },
          { name: 'named', type: 'http', url: 'http://localhost:9000/feed' },
          { name: 'lan', type: 'http', url: 'http://10.0.0.7/feed', allow_insecure: true },
        ],
      }),
    );
    assert.deepEqual(
      allowed.sources.map((s) => [s.name, s.allow_insecure]),
      [['tls', false], ['local', false], ['local6', false], ['named', false], ['lan', true]],
    );
  });

  it('max_bytes, follow_redirects, allow_insecure and clock_skew_seconds: typed, ranged, and the http-only ones refused on a file source', () => {
    const config = loadConfig({}, workdir({ sources: [fileSource('f', { max_bytes: 4096, clock_skew_seconds: 0 }), { name: 'r', type: 'http', url: 'https://x.test/', max_bytes: 1_000_000, follow_redirects: true, clock_skew_seconds: 90 }] }));
    assert.deepEqual(
      config.sources.map((s) => [s.max_bytes, s.follow_redirects, s.allow_insecure, s.clock_skew_seconds]),
      [
        [4096, undefined, undefined, 0],
        [1_000_000, true, false, 90],
      ],
    );
    rejects(load({ sources: [fileSource('a', { max_bytes: 0 })] }), 'sources[0].max_bytes');
    rejects(load({ sources: [fileSource('a', { max_bytes: 1.5 })] }), 'sources[0].max_bytes');
    rejects(load({ sources: [fileSource('a', { max_bytes: 2 ** 31 })] }), 'sources[0].max_bytes');
    rejects(load({ sources: [{ name: 'r', type: 'http', url: 'https://x.test/', follow_redirects: 'yes' }] }), 'sources[0].follow_redirects');
    rejects(load({ sources: [fileSource('a', { clock_skew_seconds: -1 })] }), 'sources[0].clock_skew_seconds');
    rejects(load({ sources: [fileSource('a', { follow_redirects: true })] }), 'sources[0].follow_redirects', 'not allowed on a file source');
    rejects(load({ sources: [fileSource('a', { allow_insecure: false })] }), 'sources[0].allow_insecure', 'not allowed on a file source');
  });

  it('a manual source: name and type, an optional max age, nothing to read or fetch', () => {
    const cwd = workdir({ sources: [fileSource('feed'), { name: 'desk', type: 'manual' }, { name: 'desk2', type: 'manual', max_age_seconds: 3600 }] });
    const [, desk, desk2] = loadConfig({}, cwd).sources;
    assert.deepEqual([desk!.name, desk!.type, desk!.max_age_seconds], ['desk', 'manual', Infinity]);
    assert.equal(desk2!.max_age_seconds, 3600);
    for (const field of ['path', 'url', 'poll_seconds', 'timeout_seconds', 'max_bytes']) {
      rejects(load({ sources: [{ name: 'desk', type: 'manual', [field]: field === 'path' || field === 'url' ? 'http://x' : 1 }] }), `sources[0].${field}: not allowed on a manual source`);
    }
  });

  it('derived: each formula parsed at load, a bad one named; the name "derived" kept for its source', () => {
    const cwd = workdir({ sources: [fileSource('feed')], derived: { gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75' }, source_priority: { gold_18k: ['derived', 'feed'] } });
    assert.deepEqual(loadConfig({}, cwd).derived?.gold_18k?.names, ['gold_ounce', 'usd_free']);
    rejects(load({ sources: [fileSource('feed')], derived: { gold_18k: 'gold_ounce ^ 2' } }), 'derived.gold_18k: "gold_ounce ^ 2": only + - * /, parentheses, decimal constants and reference names are allowed; "^" is not');
    rejects(load({ sources: [fileSource('feed')], derived: { gold_18k: '' } }), 'derived.gold_18k');
    rejects(load({ sources: [fileSource('feed')], derived: { gold_18k: 'gold_24k / 0 * 0.75' } }), 'config: derived.gold_18k: "gold_24k / 0 * 0.75": divides by zero');
    rejects(load({ sources: [fileSource('feed'), fileSource('derived')], derived: { gold_18k: 'gold_24k * 0.75' } }), 'sources[1].name: "derived" is the source of the derived references');
    rejects(load({ sources: [fileSource('feed')], source_priority: { gold_18k: ['derived'] } }), 'source_priority.gold_18k[0]: unknown source "derived"');
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

  it('max_stream_seconds: a whole number of seconds from 1 to 30 days', () => {
    for (const bad of [0, 1.5, 2_592_001, null, '3600']) rejects(load({ plans: { pro: { max_stream_seconds: bad } } }), 'plans.pro.max_stream_seconds');
    assert.deepEqual(loadConfig({}, workdir({ plans: { pro: { max_stream_seconds: 3600 } } })).plans, { pro: { max_stream_seconds: 3600 } });
  });

  it('webhooks.allow_private (default false), max_webhooks, and the test-only NERKH_WEBHOOK_TIME_SCALE', () => {
    assert.deepEqual(loadConfig({}, workdir()).webhooks, { allowPrivate: false, timeScale: 1 });
    assert.deepEqual(loadConfig({ NERKH_WEBHOOK_TIME_SCALE: '0.01' }, workdir({ webhooks: { allow_private: true } })).webhooks, { allowPrivate: true, timeScale: 0.01 });
    rejects(load({ webhooks: { allow_private: 'yes' } }), 'webhooks.allow_private');
    rejects(load({ webhooks: { allow_privat: true } }), 'webhooks', 'allow_privat');
    for (const bad of ['0', '2', '-1', 'fast']) rejects(load(undefined, { NERKH_WEBHOOK_TIME_SCALE: bad }), 'NERKH_WEBHOOK_TIME_SCALE');
    for (const bad of [-1, 1.5, '5']) rejects(load({ plans: { pro: { max_webhooks: bad } } }), 'plans.pro.max_webhooks');
    assert.deepEqual(loadConfig({}, workdir({ plans: { pro: { max_webhooks: 2 } } })).plans, { pro: { max_webhooks: 2 } });
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

  it('a JSON syntax error gives the line and column, shows the line with a caret under the spot, and names a trailing comma', () => {
    const text = ['{', '  "sources": [', '    { "name": "desk", "type": "file", "path": "./feeds/desk.json" },', '  ],', '  "timezone": "Asia/Tehran"', '}'].join('\n');
    rejects(load(text), 'invalid JSON at line 4, column 3:', 'no comma after the last item', '  4 |   ],\n    |   ^');
    // Two values with no comma between them, on a line with more after the spot.
    rejects(load('{"plans": {"a": {"services": ["detail" "status"]}}}'), 'line 1, column 40:', `  1 | {"plans"`, `\n    | ${' '.repeat(39)}^`);
    // Windows line ends count as one; a file that ends early points past its last character.
    rejects(load('{\r\n  "timezone": "UTC",\r\n'), 'line 3, column 1:', 'end of input');
  });

  it('a byte-order mark before the JSON is allowed', () => {
    assert.equal(loadConfig({}, workdir('\uFEFF{"timezone": "UTC"}')).timezone, 'UTC');
  });

  it('a missing NERKH_CONFIG file', () => {
    rejects(() => loadConfig({ NERKH_CONFIG: 'nope.json' }, workdir()), 'cannot read', 'nope.json');
  });

  it('NERKH_SHED_AFTER_LAG_MS out of range', () => {
    rejects(load(undefined, { NERKH_SHED_AFTER_LAG_MS: '10' }), 'NERKH_SHED_AFTER_LAG_MS', '"10"');
  });

  it('NERKH_SHED_AT_BUSY_PERCENT out of range', () => {
    rejects(load(undefined, { NERKH_SHED_AT_BUSY_PERCENT: '40' }), 'NERKH_SHED_AT_BUSY_PERCENT', '"40"');
    rejects(load(undefined, { NERKH_SHED_AT_BUSY_PERCENT: '101' }), 'NERKH_SHED_AT_BUSY_PERCENT', '"101"');
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

describe('page and metrics settings from the environment', () => {
  const load = (config: unknown, env: NodeJS.ProcessEnv = {}) => () => loadConfig(env, workdir(config));

  it("frame-ancestors is 'none' unless NERKH_FRAME_ANCESTORS names who may embed the pages", () => {
    assert.equal(loadConfig({}, workdir()).frameAncestors, "'none'");
    assert.equal(loadConfig({ NERKH_FRAME_ANCESTORS: ' ' }, workdir()).frameAncestors, "'none'");
    assert.equal(loadConfig({ NERKH_FRAME_ANCESTORS: "'self'   https://shop.example *.partner.example:8443 https:" }, workdir()).frameAncestors, "'self' https://shop.example *.partner.example:8443 https:");
  });

  it('a NERKH_FRAME_ANCESTORS that would break out of its directive, or say something else', () => {
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: "https://shop.example; script-src 'unsafe-inline'" }), 'NERKH_FRAME_ANCESTORS', 'not a source');
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: 'https://a.example,https://b.example' }), 'NERKH_FRAME_ANCESTORS');
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: "'none' https://shop.example" }), 'NERKH_FRAME_ANCESTORS', 'alone');
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: "'unsafe-inline'" }), 'NERKH_FRAME_ANCESTORS');
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: 'self' }), 'NERKH_FRAME_ANCESTORS', "'self'", 'quotes');
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: 'https://shop.example"' }), 'NERKH_FRAME_ANCESTORS');
    rejects(load(undefined, { NERKH_FRAME_ANCESTORS: 'https://shop.example/a;b' }), 'NERKH_FRAME_ANCESTORS');
  });

  it('/metrics is open unless NERKH_METRICS_TOKEN is set; a weak or malformed token stops the start without being repeated', () => {
    assert.equal(loadConfig({}, workdir()).metricsToken, null);
    const token = 'mTk-3f9a.b7_c1~d4+e5/f6==';
    assert.equal(loadConfig({ NERKH_METRICS_TOKEN: token }, workdir()).metricsToken, token);
    for (const bad of ['short-secret', 'has a space in it somewhere', 'quote"inside-the-token-here']) {
      assert.throws(load(undefined, { NERKH_METRICS_TOKEN: bad }), (error: unknown) => {
        assert.ok(error instanceof ConfigError && error.message.includes('NERKH_METRICS_TOKEN'), String(error));
        assert.ok(!error.message.includes(bad), `the error repeats the token: ${error.message}`);
        return true;
      });
    }
  });
});

describe('config markets', () => {
  const names = (config: ReturnType<typeof loadConfig>) => config.markets.map((market) => market.name);

  it('has tehran, international and crypto built in, tehran taking IRR, crypto its category, international the rest', () => {
    const config = loadConfig({}, workdir());
    assert.deepEqual(names(config), ['tehran', 'international', 'crypto']);
    const [tehran, international, crypto] = config.markets;
    assert.deepEqual([tehran!.timezone, tehran!.holidays, tehran!.currencies, tehran!.weekly[0]!.from], ['Asia/Tehran', 'IR', ['IRR'], 'friday 00:00']);
    assert.equal(international!.default, true);
    assert.deepEqual(crypto!.categories, ['crypto']);
    assert.deepEqual(crypto!.weekly, []);
  });

  it('merges a configured market over the built-in one, field by field, taking over what it names; adds a new one', () => {
    const config = loadConfig(
      {},
      workdir({
        sources: [fileSource('a')],
        markets: { tehran: { references: ['usdt_irr'], holidays: null }, crypto: { categories: [] }, nymex: { timezone: 'America/New_York', categories: ['energy'], weekly: [{ from: 'fri 17:00', to: 'sun 18:00', reason: 'Weekend' }] } },
      }),
    );
    assert.deepEqual(names(config), ['tehran', 'international', 'crypto', 'nymex']);
    const tehran = config.markets[0]!;
    assert.deepEqual([tehran.references, tehran.holidays, tehran.currencies], [['usdt_irr'], null, ['IRR']]);
    assert.deepEqual(config.markets[2]!.categories, []);
    assert.equal(config.markets[3]!.timezone, 'America/New_York');
  });

  it('drops the calendars with NERKH_MARKET_CALENDAR=off, keeping the markets', () => {
    const config = loadConfig({ NERKH_MARKET_CALENDAR: 'off' }, workdir());
    assert.deepEqual(names(config), ['tehran', 'international', 'crypto']);
    for (const market of config.markets) assert.deepEqual([market.weekly, market.annual, market.holidays], [[], [], null]);
    rejects(() => loadConfig({ NERKH_MARKET_CALENDAR: 'maybe' }, workdir()), 'NERKH_MARKET_CALENDAR', 'on, off');
  });

  it('refuses a bad zone, time, date, holiday country, a reference named twice or two defaults, naming the field', () => {
    const load = (markets: unknown) => () => loadConfig({}, workdir({ sources: [fileSource('a')], markets }));
    rejects(load({ tehran: { timezone: 'Mars/Olympus' } }), 'markets.tehran.timezone', 'Mars/Olympus');
    rejects(load({ tehran: { weekly: [{ from: 'caturday 10:00', to: 'sunday 10:00', reason: 'x' }] } }), 'markets.tehran.weekly[0].from', 'caturday');
    rejects(load({ tehran: { weekly: [{ from: 'friday 25:00', to: 'sunday 10:00', reason: 'x' }] } }), 'markets.tehran.weekly[0].from');
    rejects(load({ international: { annual: [{ date: '02-30', reason: 'x' }] } }), 'markets.international.annual[0].date', '02-30');
    rejects(load({ tehran: { holidays: 'XX' } }), 'markets.tehran.holidays', 'XX');
    rejects(load({ tehran: { references: ['usd_free'] }, crypto: { references: ['usd_free'] } }), 'markets.crypto.references', 'usd_free', 'markets.tehran.references');
    rejects(load({ tehran: { default: true }, crypto: { default: true } }), 'markets.crypto.default');
    rejects(load({ tehran: { opens: 'never' } }), 'markets.tehran');
  });
});
