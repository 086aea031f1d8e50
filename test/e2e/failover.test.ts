/**
 * End to end, as a new user meets Nerkh: the real `nerkh serve` process fed by
 * three file sources, an account and key made with the real CLI in another
 * process, and everything checked over HTTP on 127.0.0.1 — per-key failover,
 * a rewritten / corrupt / frozen primary, all sources stale, the status page,
 * exact digits, SIGTERM, and the zero-config demo start.
 *
 * Needs `npm run build` first (bin/nerkh.js imports dist/); `npm test` does it.
 * Run alone: node --import tsx --test test/e2e/failover.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeRaw, writeSource } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, readCatalogue, ROOT, sleep, startServer, type ServerProcess } from './helpers.js';

const SOURCES = ['alpha', 'beta', 'gamma'] as const;
type SourceName = (typeof SOURCES)[number];
const MAX_AGE_SECONDS = 3;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;
/** The enterprise plan refreshes every second: a caller sees the snapshot as of the last whole second. */
const TIER_MS = 1000;

interface Rate {
  key: string;
  value: number | null;
  status: 'ok' | 'stale' | 'unavailable';
  source: string | null;
  updated_at: string | null;
  stale_seconds?: number;
}
interface Detail {
  success: boolean;
  count: number;
  rates: Rate[];
}
interface SourceStatus {
  name: string;
  state: string;
  last_update: string | null;
  age_seconds: number | null;
  error: string | null;
}
interface StatusBody {
  success: boolean;
  service: { state: string; message: string };
  endpoints: { name: string; path: string; state: string }[];
  sources: SourceStatus[];
}

/** Five well-known references; their source keys are read from the shipped catalogue, not assumed. */
const REFERENCE_KEYS = ['usd_free', 'eur_free', 'coin_emami', 'gold_18k', 'oil_brent'] as const;
/** alpha (the primary) lacks these two: they must come from beta. */
const ALPHA_LACKS = new Set<string>(['eur_free', 'gold_18k']);

interface Ref {
  key: string;
  sourceKey: string;
  level: number;
}

function pickReferences(): Ref[] {
  const { references } = readCatalogue();
  const levels = JSON.parse(readFileSync(join(ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
  return REFERENCE_KEYS.map((key) => {
    const entry = references.get(key);
    assert.ok(entry, `catalogue has no reference "${key}"`);
    const level = levels[entry.source_key];
    return { key, sourceKey: entry.source_key, level: typeof level === 'number' && level > 0 ? level : 1000 };
  });
}

/**
 * A realistic value, distinct per source and per generation, so a response
 * tells who supplied it. Sources and generations differ by fractions of a
 * percent, as real quotes do: screening rejects a value far from the other
 * sources' median (a generation ahead must not look like an outlier).
 */
function valueFor(ref: Ref, source: SourceName, generation: number): number {
  const s = SOURCES.indexOf(source) + 1;
  if (ref.level >= 1000) return Math.round(ref.level * (1 + generation / 1000)) + s * 10;
  return Number((ref.level * (1 + generation * 0.002 + s * 0.0003)).toPrecision(8));
}

function itemsFor(refs: Ref[], source: SourceName, generation: number): Record<string, number> {
  const items: Record<string, number> = {};
  for (const ref of refs) if (source !== 'alpha' || !ALPHA_LACKS.has(ref.key)) items[ref.sourceKey] = valueFor(ref, source, generation);
  return items;
}

/** Keeps the live sources fresh, as an upstream feeder would: every source file rewritten each second. */
class Feeder {
  readonly items = {} as Record<SourceName, Record<string, number>>;
  readonly live = new Set<SourceName>(SOURCES);
  /** The `updated_at` (epoch ms) of each source's last write. */
  readonly lastUpdatedAt = new Map<SourceName, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly paths: Record<SourceName, string>) {}

  write(name: SourceName, at = Date.now()): void {
    writeSource(this.paths[name], this.items[name], new Date(at));
    this.lastUpdatedAt.set(name, at);
  }

  start(): void {
    for (const name of SOURCES) this.write(name);
    this.timer = setInterval(() => {
      for (const name of this.live) this.write(name);
    }, 1000);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.live.clear();
  }
}

describe('e2e: three file sources with failover, real server and CLI processes', () => {
  const refs = pickReferences();
  const keysPath = `/v1/rates/${refs.map((r) => r.key).join(',')}`;
  const alphaRefs = refs.filter((r) => !ALPHA_LACKS.has(r.key));
  let dir: ReturnType<typeof tempDir> | null = null;
  let feeder: Feeder | null = null;
  let server: ServerProcess | null = null;
  let env: Record<string, string> = {};
  let apiKey = '';

  const detail = async (): Promise<Detail> => {
    const response = await get(server!.base, keysPath, apiKey);
    assert.equal(response.status, 200, `detail: HTTP ${response.status}: ${response.text.slice(0, 300)}`);
    return response.json as Detail;
  };
  const detailText = async (): Promise<string> => {
    const response = await get(server!.base, keysPath, apiKey);
    assert.equal(response.status, 200, `detail: HTTP ${response.status}: ${response.text.slice(0, 300)}`);
    return response.text;
  };
  const status = async (): Promise<StatusBody> => {
    const response = await get(server!.base, '/v1/status', apiKey);
    assert.equal(response.status, 200, `status: HTTP ${response.status}: ${response.text.slice(0, 300)}`);
    return response.json as StatusBody;
  };
  const rateOf = (body: Detail, key: string): Rate => {
    const rate = body.rates.find((r) => r.key === key);
    assert.ok(rate, `no rate for ${key} in ${JSON.stringify(body).slice(0, 500)}`);
    return rate;
  };
  const sourceOf = (body: StatusBody, name: string): SourceStatus => {
    const source = body.sources.find((s) => s.name === name);
    assert.ok(source, `no source ${name} in ${JSON.stringify(body.sources)}`);
    return source;
  };
  /** True when every listed reference is served fresh by `source` with that source's value of `generation`. */
  const servedBy = (body: Detail, which: Ref[], source: SourceName, generation: number) =>
    which.every((ref) => {
      const rate = body.rates.find((r) => r.key === ref.key);
      return rate !== undefined && rate.status === 'ok' && rate.source === source && rate.value === valueFor(ref, source, generation);
    });
  /** The error text of a source must not leak where its file lives. */
  const assertNoPath = (text: string, label: string) => {
    assert.ok(!text.includes(dir!.path), `${label} leaks the source folder: ${text}`);
    assert.ok(!text.includes(tmpdir()), `${label} leaks a filesystem path: ${text}`);
    assert.ok(!/alpha\.json/.test(text), `${label} leaks the file name: ${text}`);
  };

  before(async () => {
    assertBuilt();
    dir = tempDir('nerkh-e2e-failover-');
    const paths = Object.fromEntries(SOURCES.map((name) => [name, join(dir!.path, `${name}.json`)])) as Record<SourceName, string>;
    feeder = new Feeder(paths);
    for (const name of SOURCES) feeder.items[name] = itemsFor(refs, name, 0);
    feeder.start();
    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: SOURCES.map((name) => ({ name, type: 'file', path: paths[name], max_age_seconds: MAX_AGE_SECONDS, poll_seconds: 0.5 })),
        timezone: 'Asia/Tehran',
      }),
    );
    env = { NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'warn' };
    server = await startServer(env);
  });

  after(async () => {
    feeder?.stop();
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (failover) stderr:\n${server.stderr.slice(-3000)}`);
    }
    dir?.cleanup();
  });

  it('1. a key issued by the CLI after start-up works within 2 s', async (t) => {
    const cliEnv = cleanEnv(env);
    await cliOk(cliEnv, ['accounts', 'add', 'e2e-user', '--plan', 'enterprise']);
    const issued = await cliOk(cliEnv, ['keys', 'issue', 'e2e-user', '--json']);
    const issuedAt = Date.now();
    const parsed = JSON.parse(issued.stdout) as { key?: unknown };
    assert.equal(typeof parsed.key, 'string', `keys issue --json printed no key: ${issued.stdout}`);
    apiKey = parsed.key as string;
    assert.match(apiKey, /^nrk_[0-9A-Za-z]{32}$/);

    await pollUntil(() => get(server!.base, keysPath, apiKey), (r) => r.status === 200, 5000, 100, (r) => `HTTP ${r.status} ${r.text.slice(0, 200)}`);
    const elapsed = Date.now() - issuedAt;
    // How soon is a bench figure; here only that it happens.
    t.diagnostic(`the new key worked ${elapsed} ms after \`keys issue\` returned`);
  });

  it('2. each key comes from the first source that has it; a key alpha lacks comes from beta', async () => {
    const body = await detail();
    assert.equal(body.success, true);
    assert.equal(body.count, refs.length);
    for (const ref of refs) {
      const rate = rateOf(body, ref.key);
      const expected: SourceName = ALPHA_LACKS.has(ref.key) ? 'beta' : 'alpha';
      assert.equal(rate.status, 'ok', `${ref.key}: ${JSON.stringify(rate)}`);
      assert.equal(rate.source, expected, `${ref.key}: ${JSON.stringify(rate)}`);
      assert.equal(rate.value, valueFor(ref, expected, 0), `${ref.key}: ${JSON.stringify(rate)}`);
      // Timestamps carry a numeric offset in the configured zone (Asia/Tehran), never Z.
      assert.match(rate.updated_at ?? '', ISO_WITH_OFFSET, `${ref.key}: ${JSON.stringify(rate)}`);
    }
    // Baseline for the failure cases below: with every source healthy the service is all active.
    const { value: healthy } = await pollUntil(status, (s) => s.service.state === 'active', 3000, 100);
    assert.equal(healthy.service.message, 'all services active');
    assert.deepEqual(
      healthy.sources.map((s) => [s.name, s.state, s.error]),
      SOURCES.map((name) => [name, 'active', null]),
    );
  });

  it('3. a rewritten alpha file shows within 2 s (+1 s refresh tier)', async (t) => {
    feeder!.items.alpha = itemsFor(refs, 'alpha', 1);
    const written = Date.now();
    feeder!.write('alpha');
    await pollUntil(detail, (body) => servedBy(body, alphaRefs, 'alpha', 1), 5000);
    const elapsed = Date.now() - written;
    t.diagnostic(`the rewritten alpha showed after ${elapsed} ms`);
    // Keys alpha does not have are still beta's.
    const body = await detail();
    assert.ok(servedBy(body, refs.filter((r) => ALPHA_LACKS.has(r.key)), 'beta', 0), JSON.stringify(body.rates));
  });

  it('9. values keep the exact digits the source wrote', async () => {
    const decimalRef = refs.find((r) => r.key === 'oil_brent')!;
    const integerRef = refs.find((r) => r.key === 'usd_free')!;
    const decimal = Math.floor(decimalRef.level) + 0.5; // e.g. 300.5
    const integer = Math.floor(integerRef.level / 10_000) * 10_000 + 4567; // e.g. 1234567
    feeder!.items.alpha = { ...feeder!.items.alpha, [decimalRef.sourceKey]: decimal, [integerRef.sourceKey]: integer };
    feeder!.write('alpha');
    const { value: text } = await pollUntil(detailText, (t) => t.includes(`"value":${decimal},`) && t.includes(`"value":${integer},`), 5000, 50, (t) => t.slice(0, 1500));
    assert.ok(!text.includes(`"value":${integer}.0`) && !/"value":\d+(\.\d+)?e/i.test(text), text);
    const body = JSON.parse(text) as Detail;
    assert.equal(rateOf(body, decimalRef.key).value, decimal);
    assert.equal(rateOf(body, integerRef.key).value, integer);
    assert.ok(Number.isInteger(rateOf(body, integerRef.key).value), 'Number.isInteger(rateOf(body, integerRef.key).value)');
    // Back to the regular generation-1 values for the steps that follow.
    feeder!.items.alpha = itemsFor(refs, 'alpha', 1);
    feeder!.write('alpha');
    await pollUntil(detail, (b) => servedBy(b, alphaRefs, 'alpha', 1), 5000);
  });

  it('4. a corrupt alpha file makes alpha unhealthy: status says so without paths, values fail over to beta', async (t) => {
    feeder!.live.delete('alpha');
    const broken = Date.now();
    writeRaw(feeder!.paths.alpha, '{not json');

    const { value: body } = await pollUntil(status, (s) => sourceOf(s, 'alpha').state !== 'active', 5000, 100);
    const alpha = sourceOf(body, 'alpha');
    assert.equal(alpha.state, 'degraded', `an erroring source with last good data kept is degraded (docs/reliability.md#sources-and-failover): ${JSON.stringify(alpha)}`);
    assert.equal(typeof alpha.error, 'string', JSON.stringify(alpha));
    assert.ok(alpha.error!.length > 0, 'alpha.error!.length > 0');
    assertNoPath(alpha.error!, 'alpha error');
    t.diagnostic(`alpha: ${alpha.state}, error "${alpha.error}"; banner "${body.service.message}"`);
    assert.ok(alpha.last_update !== null, 'the last good data of alpha is kept');
    assert.notEqual(body.service.state, 'active', JSON.stringify(body.service));
    assert.notEqual(body.service.message, 'all services active');
    assert.equal(sourceOf(body, 'beta').state, 'active');
    assert.equal(sourceOf(body, 'gamma').state, 'active');

    // Product rule: an unreadable source is unhealthy, so its still-young data is not used.
    await pollUntil(detail, (b) => servedBy(b, refs, 'beta', 0), 5000);
    const elapsed = Date.now() - broken;
    t.diagnostic(`failover from the corrupt alpha after ${elapsed} ms`);

    const page = await get(server!.base, '/status');
    assertNoPath(page.text, 'status page');
  });

  it('5. once alpha is fixed it is active again and its values are used again', async () => {
    feeder!.items.alpha = itemsFor(refs, 'alpha', 2);
    feeder!.write('alpha');
    feeder!.live.add('alpha');
    await pollUntil(detail, (body) => servedBy(body, alphaRefs, 'alpha', 2) && servedBy(body, refs.filter((r) => ALPHA_LACKS.has(r.key)), 'beta', 0), 5000);
    const { value: body } = await pollUntil(status, (s) => s.service.state === 'active', 5000, 100);
    assert.equal(sourceOf(body, 'alpha').state, 'active');
    assert.equal(sourceOf(body, 'alpha').error, null);
    assert.equal(body.service.message, 'all services active');
  });

  it('6. a primary that stops updating is replaced per key by beta once past max_age_seconds', async (t) => {
    feeder!.live.delete('alpha');
    const lastUpdate = feeder!.lastUpdatedAt.get('alpha')!;
    const body = (await pollUntil(detail, (b) => servedBy(b, refs, 'beta', 0), (MAX_AGE_SECONDS + 5) * 1000)).value;
    const takeover = Date.now() - lastUpdate;
    t.diagnostic(`beta took over ${takeover} ms after alpha's last updated_at (max age ${MAX_AGE_SECONDS} s)`);
    assert.ok(takeover >= MAX_AGE_SECONDS * 1000 - 100, `beta took over after ${takeover} ms, before alpha's data was ${MAX_AGE_SECONDS} s old`);
    assert.ok(takeover <= MAX_AGE_SECONDS * 1000 + 1000 + TIER_MS + 1500, `beta took over only after ${takeover} ms`);
    assert.ok(body.rates.every((r) => r.source !== 'gamma'), 'gamma is never used while beta is fresh');

    const { value: health } = await pollUntil(status, (s) => sourceOf(s, 'alpha').state === 'degraded', 5000, 100);
    const alpha = sourceOf(health, 'alpha');
    assert.equal(typeof alpha.error, 'string', JSON.stringify(alpha));
    assert.ok((alpha.age_seconds ?? 0) >= MAX_AGE_SECONDS, JSON.stringify(alpha));
    assert.notEqual(health.service.state, 'active');
    assert.equal(sourceOf(health, 'beta').state, 'active');
  });

  it('7. with no fresh source at all the last value is served as stale, with stale_seconds', async () => {
    const previous = await detail();
    const lastValues = new Map(previous.rates.map((r) => [r.key, r.value]));
    assert.ok(servedBy(previous, refs, 'beta', 0), JSON.stringify(previous.rates));

    // The feeder stops. gamma's file is rewritten as a minute old and seen to be old first, so that
    // beta's values are, deterministically, the last ones served fresh; then beta (and alpha, frozen
    // since step 6) simply age past max_age_seconds.
    feeder!.stop();
    const betaLast = feeder!.lastUpdatedAt.get('beta')!;
    feeder!.write('gamma', Date.now() - 60_000);
    await pollUntil(status, (s) => sourceOf(s, 'gamma').state === 'degraded', 5000, 50);

    const { value: body } = await pollUntil(detail, (b) => b.rates.every((r) => r.status === 'stale'), (MAX_AGE_SECONDS + 5) * 1000);
    const ageSeconds = (Date.now() - betaLast) / 1000;
    assert.ok(ageSeconds > MAX_AGE_SECONDS, `values went stale after ${ageSeconds} s, before beta's data was ${MAX_AGE_SECONDS} s old`);
    for (const name of SOURCES) assert.ok(Date.now() - feeder!.lastUpdatedAt.get(name)! > MAX_AGE_SECONDS * 1000, `${name} is not older than max age`);
    for (const rate of body.rates) {
      assert.equal(typeof rate.value, 'number', JSON.stringify(rate));
      assert.equal(rate.value, lastValues.get(rate.key), `the last value is served: ${JSON.stringify(rate)}`);
      assert.equal(rate.source, 'beta', JSON.stringify(rate));
      assert.equal(typeof rate.stale_seconds, 'number', JSON.stringify(rate));
      assert.ok(Number.isInteger(rate.stale_seconds), JSON.stringify(rate));
      assert.ok(rate.stale_seconds! >= MAX_AGE_SECONDS && rate.stale_seconds! <= Math.ceil(ageSeconds), `stale_seconds should be the value's age (~${ageSeconds.toFixed(1)} s): ${JSON.stringify(rate)}`);
      assert.equal(typeof rate.updated_at, 'string');
    }
    const text = await detailText();
    assert.match(text, /"value":\d/, 'value stays a JSON number, not a string');

    const { value: health } = await pollUntil(status, (s) => s.sources.every((source) => source.state !== 'active'), 5000, 100);
    assert.notEqual(health.service.state, 'active');
    assert.equal(health.endpoints.find((e) => e.name === 'detail')?.state, 'degraded', JSON.stringify(health.endpoints));
  });

  it('8. GET /status (no key) is an HTML page naming every source', async () => {
    const page = await get(server!.base, '/status');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    for (const name of SOURCES) assert.ok(page.text.includes(name), `the status page does not mention ${name}`);
    assertNoPath(page.text, 'status page');
  });

  it('10. SIGTERM while requests are in flight: they complete, and the process exits 0 within 10 s', async (t) => {
    const base = server!.base;
    let running = true;
    let completed = 0;
    const statuses = new Set<number>();
    const broken: string[] = [];
    const client = async () => {
      while (running) {
        let response: globalThis.Response;
        try {
          response = await fetch(`${base}${keysPath}`, { headers: { 'x-api-key': apiKey }, signal: AbortSignal.timeout(5000) });
        } catch {
          // Refused or closed before any answer: the server stopped accepting, which is allowed.
          await sleep(10);
          continue;
        }
        try {
          // An answer that has started must finish: a cut-off body means a request was dropped mid-flight.
          JSON.parse(await response.text());
          statuses.add(response.status);
          completed++;
        } catch (error) {
          broken.push(`HTTP ${response.status}: ${(error as Error).message}`);
        }
      }
    };
    const clients = Array.from({ length: 4 }, () => client());
    try {
      await pollUntil(async () => completed, (n) => n >= 20, 5000, 10);
      const atSignal = completed;
      const { exit, ms } = await server!.stop('SIGTERM');
      t.diagnostic(`SIGTERM after ${atSignal} responses; ${completed - atSignal} more completed while draining; exit after ${ms} ms`);
      assert.ok(exit, `nerkh serve did not exit after SIGTERM\n${server!.output()}`);
      assert.equal(exit.code, 0, `exit ${JSON.stringify(exit)}\n${server!.output()}`);
    } finally {
      running = false;
      await Promise.all(clients);
    }
    assert.deepEqual(broken, [], 'responses cut off by the shutdown');
    assert.ok([...statuses].every((s) => s === 200 || s === 503), `statuses during shutdown: ${[...statuses].join(', ')}`);
  });
});

describe('e2e: zero-config start (npm start with no config, fresh data dir)', () => {
  const { popular } = readCatalogue();
  const tenKeys = popular.slice(0, 10);
  let dataDir: ReturnType<typeof tempDir> | null = null;
  let cwd: ReturnType<typeof tempDir> | null = null;
  let server: ServerProcess | null = null;
  let demoKey = '';

  before(async () => {
    assertBuilt();
    dataDir = tempDir('nerkh-e2e-demo-data-');
    // A working folder with no nerkh.config.json, so only the built-in demo setup can apply.
    cwd = tempDir('nerkh-e2e-demo-cwd-');
    server = await startServer({ NERKH_DATA_DIR: dataDir.path }, { cwd: cwd.path });
  });

  after(async () => {
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (demo) stderr:\n${server.stderr.slice(-3000)}`);
    }
    dataDir?.cleanup();
    cwd?.cleanup();
  });

  it('11a. answers /healthz and prints a demo key', async (t) => {
    await pollUntil(() => get(server!.base, '/healthz'), (r) => r.status === 200, 5000, 50, (r) => `HTTP ${r.status}`);
    const elapsed = Date.now() - server!.startedAt;
    t.diagnostic(`/healthz answered ${elapsed} ms after the spawn`);

    const { value: stdout } = await pollUntil(async () => server!.stdout, (out) => /^\s*nrk_\S+\s*$/m.test(out), 5000, 50, (out) => out);
    demoKey = /^\s*(nrk_\S+)\s*$/m.exec(stdout)![1]!;
    assert.match(demoKey, /^nrk_[0-9A-Za-z]{32}$/);
  });

  it('11b. the demo key reads the catalogue: > 300 references, no prices', async () => {
    assert.ok(demoKey, 'no demo key');
    const response = await get(server!.base, '/v1/rates', demoKey);
    assert.equal(response.status, 200, response.text.slice(0, 300));
    const body = response.json as { count: number; references: Record<string, unknown>[] };
    assert.ok(body.count > 300, `catalogue count ${body.count}`);
    assert.equal(body.references.length, body.count);
    assert.ok(
      body.references.every((r) => !('value' in r)),
      'the catalogue carries no values',
    );
  });

  it('11c. 10 popular keys have values that move within 30 s', async () => {
    assert.ok(demoKey, 'no demo key');
    assert.equal(tenKeys.length, 10);
    const path = `/v1/rates/${tenKeys.join(',')}`;
    const read = async () => {
      const response = await get(server!.base, path, demoKey);
      assert.equal(response.status, 200, response.text.slice(0, 300));
      return response.json as Detail;
    };
    // The demo account is on pro, which sees the snapshot of its last 10 s boundary: right after the
    // first start that can be one from before the demo's first values, so wait up to one interval.
    const { value: first } = await pollUntil(read, (body) => body.rates.every((r) => typeof r.value === 'number'), 12_000, 500);
    assert.equal(first.count, 10);
    assert.deepEqual(
      first.rates.map((r) => r.key),
      tenKeys,
    );
    for (const rate of first.rates) assert.equal(typeof rate.value, 'number', JSON.stringify(rate));
    const initial = new Map(first.rates.map((r) => [r.key, r.value]));
    // The demo account is on pro: a 10 s refresh interval, so a change shows at the next 10 s boundary.
    const { value: later } = await pollUntil(read, (body) => body.rates.some((r) => r.value !== initial.get(r.key)), 30_000, 2000);
    const moved = later.rates.filter((r) => r.value !== initial.get(r.key));
    assert.ok(moved.length >= 1, 'moved.length >= 1');
    for (const rate of later.rates) assert.equal(typeof rate.value, 'number', JSON.stringify(rate));
  });

  it('11d. SIGTERM stops it with exit code 0', async () => {
    const { exit } = await server!.stop('SIGTERM');
    assert.ok(exit, `the demo server did not exit\n${server!.output()}`);
    assert.equal(exit.code, 0, JSON.stringify(exit));
  });
});
