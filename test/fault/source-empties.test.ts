/**
 * Fault: the primary source keeps answering, but with nothing usable. The
 * real `nerkh serve` process reads two file sources; the first is emptied
 * (`"items": {}`), then filled with insane values only, then restored. Values
 * must keep coming from the second source with the exact digits it wrote, the
 * first must show `degraded` with the reason, its last good data must never be
 * replaced, and recovery must return it to `active` — with no 5xx and no exit.
 *
 * Needs `npm run build` first (bin/nerkh.js imports dist/); `npm test` does it.
 * Run alone: node --import tsx --test test/fault/source-empties.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeRaw } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, get, pollUntil, readCatalogue, ROOT, sleep, startServer, type ServerProcess } from '../e2e/helpers.js';

interface Rate {
  key: string;
  value: number | null;
  status: string;
  source: string | null;
}
interface SourceStatus {
  name: string;
  state: string;
  last_update: string | null;
  error: string | null;
}
interface StatusBody {
  service: { state: string; message: string };
  sources: SourceStatus[];
}

const KEYS = ['usd_free', 'coin_emami', 'oil_brent'] as const;

/**
 * Realistic values written as raw JSON text, so the digits served can be
 * compared character for character (`71.250` must stay `71.250`).
 */
function documents() {
  const { references } = readCatalogue();
  const levels = JSON.parse(readFileSync(join(ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
  const sourceKey = (key: string) => references.get(key)!.source_key;
  const level = (key: string) => levels[sourceKey(key)]!;
  const text = (values: Record<string, string>, at: Date) =>
    `{"updated_at":"${at.toISOString()}","items":{${Object.entries(values)
      .map(([key, raw]) => `"${sourceKey(key)}":${raw}`)
      .join(',')}}}`;
  const digits = (shift: number): Record<string, string> => ({
    usd_free: String(Math.round(level('usd_free')) + shift),
    coin_emami: String(Math.round(level('coin_emami')) + shift * 1000),
    oil_brent: `${Math.floor(level('oil_brent')) + shift}.250`,
  });
  return { text, digits, sourceKey };
}

describe('fault: the first of two sources empties, turns insane, then recovers', () => {
  const { text, digits, sourceKey } = documents();
  const first = { v1: digits(11), v2: digits(33) };
  const second = digits(22);
  let dir: ReturnType<typeof tempDir> | null = null;
  let server: ServerProcess | null = null;
  let apiKey = '';
  let paths = { first: '', second: '' };
  /** `last_update` of the first source as shown after its good document was read. */
  let goodUpdate: string | null = null;

  const keysPath = `/v1/rates/${KEYS.join(',')}`;
  const detailText = async () => {
    const response = await get(server!.base, keysPath, apiKey);
    assert.equal(response.status, 200, `detail: HTTP ${response.status}: ${response.text.slice(0, 300)}`);
    return response.text;
  };
  const status = async () => {
    const response = await get(server!.base, '/v1/status', apiKey);
    assert.equal(response.status, 200, `status: HTTP ${response.status}: ${response.text.slice(0, 300)}`);
    return response.json as StatusBody;
  };
  const sourceOf = (body: StatusBody, name: string) => body.sources.find((s) => s.name === name)!;
  /** True when the raw body carries exactly these digits for every key, from `source`. */
  const servedExactly = (body: string, values: Record<string, string>, source: string) => {
    const rates = (JSON.parse(body) as { rates: Rate[] }).rates;
    return KEYS.every((key) => {
      const rate = rates.find((r) => r.key === key);
      return rate?.status === 'ok' && rate.source === source && body.includes(`"key":"${key}"`) && new RegExp(`"key":"${key}"[^}]*"value":${values[key]!.replace('.', '\\.')},`).test(body);
    });
  };

  /** Every answer seen by the background client: the status codes and any value not written by a good document. */
  const seen = { statuses: new Map<number, number>(), foreign: [] as string[], requests: 0 };
  let watching = true;
  let watcher: Promise<void> | null = null;

  before(async () => {
    assertBuilt();
    dir = tempDir('nerkh-fault-empties-');
    paths = { first: join(dir.path, 'first.json'), second: join(dir.path, 'second.json') };
    // The good document says it was updated a minute ago: every later document (stamped now) has a later
    // updated_at, so a last_update replaced by a bad one would show, without waiting for the clock to move on.
    writeRaw(paths.first, text(first.v1, new Date(Date.now() - 60_000)));
    writeRaw(paths.second, text(second, new Date()));
    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [
          { name: 'first', type: 'file', path: paths.first, max_age_seconds: 600, poll_seconds: 0.5 },
          { name: 'second', type: 'file', path: paths.second, max_age_seconds: 600, poll_seconds: 0.5 },
        ],
      }),
    );
    const env = { NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'info' };
    server = await startServer(env);
    await cliOk(cleanEnv(env), ['accounts', 'add', 'fault-user', '--plan', 'enterprise']);
    apiKey = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', 'fault-user', '--json'])).stdout) as { key: string }).key;
    await pollUntil(() => get(server!.base, keysPath, apiKey), (r) => r.status === 200, 5000, 100, (r) => `HTTP ${r.status}`);

    // A steady client for the whole run: detail and status, about 20 requests a second.
    const allowed = new Set([...Object.values(first.v1), ...Object.values(first.v2), ...Object.values(second)]);
    watcher = (async () => {
      while (watching) {
        for (const path of [keysPath, '/v1/status']) {
          const response = await get(server!.base, path, apiKey).catch(() => null);
          seen.requests++;
          if (!response) continue;
          seen.statuses.set(response.status, (seen.statuses.get(response.status) ?? 0) + 1);
          if (path !== keysPath || response.status !== 200) continue;
          for (const rate of (response.json as { rates: Rate[] }).rates) {
            const raw = new RegExp(`"key":"${rate.key}"[^}]*"value":([^,]+),`).exec(response.text)?.[1];
            if (rate.status !== 'ok' || raw === undefined || !allowed.has(raw)) seen.foreign.push(`${rate.key}: ${rate.status} ${raw} from ${rate.source}`);
          }
        }
        await sleep(100);
      }
    })();
  });

  after(async () => {
    watching = false;
    await watcher;
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (fault) stderr:\n${server.stderr.slice(-3000)}`);
    }
    dir?.cleanup();
  });

  it('1. at first every value comes from the first source and all services are active', async () => {
    await pollUntil(detailText, (body) => servedExactly(body, first.v1, 'first'), 5000, 100, (b) => b.slice(0, 600));
    const { value: body } = await pollUntil(status, (s) => s.service.state === 'active', 5000, 100);
    assert.equal(body.service.message, 'all services active');
    goodUpdate = sourceOf(body, 'first').last_update;
    assert.ok(goodUpdate !== null, 'goodUpdate !== null');
  });

  const degradedPhase = (step: string, write: () => void, reason: string) =>
    it(step, async (t) => {
      const started = Date.now();
      write();
      const { value: body } = await pollUntil(status, (s) => sourceOf(s, 'first').state === 'degraded' && sourceOf(s, 'first').error === reason, 5000, 50);
      t.diagnostic(`first degraded after ${Date.now() - started} ms: "${sourceOf(body, 'first').error}"; banner "${body.service.message}"`);
      assert.notEqual(body.service.state, 'active');
      assert.notEqual(body.service.message, 'all services active');
      assert.match(body.service.message, /first degraded/);
      assert.equal(sourceOf(body, 'first').last_update, goodUpdate, 'the last good data of the first source is kept');
      assert.deepEqual([sourceOf(body, 'second').state, sourceOf(body, 'second').error], ['active', null]);

      await pollUntil(detailText, (text) => servedExactly(text, second, 'second'), 3000, 50, (b) => b.slice(0, 600));
      // And it stays so: every answer for the next second comes from the second source.
      // A window, not a wait: the first source's file does not change again, so no later event of the server's
      // could mark "it would have switched back by now".
      for (let i = 0; i < 5; i++) {
        assert.ok(servedExactly(await detailText(), second, 'second'), 'still served from the second source');
        await sleep(200);
      }
      const page = await get(server!.base, '/status');
      assert.equal(page.status, 200);
      assert.ok(page.text.includes(reason), 'the status page shows the reason');
    });

  degradedPhase('2. emptied (`"items": {}`): degraded with the reason, values from the second source', () => writeRaw(paths.first, `{"updated_at":"${new Date().toISOString()}","items":{}}`), 'no usable values (items is empty)');

  degradedPhase(
    '3. every value insane (zero, negative, not finite): degraded with the dropped count, values from the second source',
    () => writeRaw(paths.first, `{"updated_at":"${new Date().toISOString()}","items":{"${sourceKey('usd_free')}":0,"${sourceKey('coin_emami')}":-1100000000,"${sourceKey('oil_brent')}":1e999}}`),
    'no usable values (3 dropped)',
  );

  it('4. restored: the first source is active again and its new values are served', async () => {
    writeRaw(paths.first, text(first.v2, new Date()));
    await pollUntil(detailText, (body) => servedExactly(body, first.v2, 'first'), 5000, 50, (b) => b.slice(0, 600));
    const { value: body } = await pollUntil(status, (s) => s.service.state === 'active', 5000, 100);
    assert.equal(body.service.message, 'all services active');
    assert.deepEqual([sourceOf(body, 'first').state, sourceOf(body, 'first').error], ['active', null]);
    assert.notEqual(sourceOf(body, 'first').last_update, goodUpdate);
  });

  it('5. throughout: no 5xx, no value from a bad document, no exit; the state changes were logged', async () => {
    watching = false;
    await watcher;
    const statuses = Object.fromEntries(seen.statuses);
    assert.ok(seen.requests >= 40, `only ${seen.requests} requests`);
    assert.deepEqual(Object.keys(statuses), ['200'], `statuses seen: ${JSON.stringify(statuses)}`);
    assert.deepEqual(seen.foreign, [], 'a rate not served fresh from a good document');
    assert.ok(server!.running, `nerkh serve exited: ${JSON.stringify(server!.exit)}\n${server!.output()}`);

    const lines = server!.stdout
      .split('\n')
      .filter((line) => line.includes('"part":"sources"'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; source: string; from?: string; to?: string; reason: string | null });
    assert.deepEqual(
      lines.filter((l) => l.to !== undefined).map((l) => [l.level, l.source, l.from, l.to, l.reason]),
      [
        [40, 'first', 'active', 'degraded', 'no usable values (items is empty)'],
        [30, 'first', 'degraded', 'active', null],
      ],
    );
    assert.deepEqual(
      lines.filter((l) => l.msg.includes('read failed')).map((l) => [l.level, l.source, l.reason]),
      [
        [40, 'first', 'no usable values (items is empty)'],
        [40, 'first', 'no usable values (3 dropped)'],
      ],
    );

    const { exit } = await server!.stop('SIGTERM', 10_000);
    assert.equal(exit?.code, 0, server!.output());
  });
});
