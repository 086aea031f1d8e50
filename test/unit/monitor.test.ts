import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { ZoneTime } from '../../src/domain/time.js';
import { RatesEngine } from '../../src/live/engine.js';
import { FileSourceReader } from '../../src/sources/file.js';
import { SourceMonitor, type SourceConfig } from '../../src/sources/monitor.js';
import { SourceFormatError } from '../../src/sources/parse.js';
import { catalogueWithoutBands, eventually, fileSources, tempDir, writeRaw, writeSource } from '../support/env.js';

const root = tempDir('nerkh-monitor-');
let folderCount = 0;
after(() => root.cleanup());

/** A fresh folder for one test's sources. */
function folder(): string {
  const path = join(root.path, `t${folderCount++}`);
  mkdirSync(path, { recursive: true });
  return path;
}

const ago = (ms: number) => new Date(Date.now() - ms);

describe('FileSourceReader', () => {
  it('reads once, then returns null until the file changes', async () => {
    const path = join(folder(), 'a.json');
    writeSource(path, { x: 5 });
    const reader = new FileSourceReader(path, 1);
    const first = await reader.readIfChanged();
    assert.equal(first?.items.get('x')?.raw, '5');
    assert.equal(await reader.readIfChanged(), null);
    assert.equal(await reader.readIfChanged(), null);
    writeSource(path, { x: 6 });
    const second = await reader.readIfChanged();
    assert.equal(second?.items.get('x')?.raw, '6');
    assert.equal(await reader.readIfChanged(), null);
  });

  it('re-reads when only the modification time changes', async () => {
    const path = join(folder(), 'a.json');
    writeFileSync(path, '{"items":{"x":5}}');
    const reader = new FileSourceReader(path, 1);
    assert.ok(await reader.readIfChanged(), 'await reader.readIfChanged()');
    assert.equal(await reader.readIfChanged(), null);
    const earlier = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    utimesSync(path, earlier, earlier);
    const again = await reader.readIfChanged();
    assert.ok(again, 'a new mtime must trigger a read');
    assert.equal(again.items.get('x')?.updatedAt, earlier.getTime());
  });

  it('re-reads when the size changes in place', async () => {
    const path = join(folder(), 'a.json');
    writeFileSync(path, '{"items":{"x":5}}');
    const fixed = new Date('2026-01-01T00:00:00Z');
    utimesSync(path, fixed, fixed);
    const reader = new FileSourceReader(path, 1);
    assert.ok(await reader.readIfChanged(), 'await reader.readIfChanged()');
    writeFileSync(path, '{"items":{"x":55}}');
    utimesSync(path, fixed, fixed);
    const again = await reader.readIfChanged();
    assert.equal(again?.items.get('x')?.raw, '55');
  });

  it("dates bare numbers with the file's modification time when the document has no updated_at", async () => {
    const path = join(folder(), 'a.json');
    writeFileSync(path, '{"items":{"x":5}}');
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
    utimesSync(path, mtime, mtime);
    const data = await new FileSourceReader(path, 1).readIfChanged();
    assert.equal(data?.items.get('x')?.updatedAt, mtime.getTime());
    assert.equal(data?.dataTime, mtime.getTime());
  });

  it('throws for a missing file and reads it once it appears', async () => {
    const path = join(folder(), 'a.json');
    const reader = new FileSourceReader(path, 1);
    await assert.rejects(reader.readIfChanged(), (error: NodeJS.ErrnoException) => error.code === 'ENOENT');
    writeSource(path, { x: 1 });
    assert.equal((await reader.readIfChanged())?.items.get('x')?.raw, '1');
  });

  it('throws SourceFormatError for a corrupt file, and does not re-read it until it changes', async () => {
    const path = join(folder(), 'a.json');
    writeRaw(path, '{"items": {');
    const reader = new FileSourceReader(path, 1);
    await assert.rejects(reader.readIfChanged(), SourceFormatError);
    assert.equal(await reader.readIfChanged(), null);
    writeSource(path, { x: 2 });
    assert.equal((await reader.readIfChanged())?.items.get('x')?.raw, '2');
  });
});

describe('SourceMonitor with file sources', () => {
  const running: SourceMonitor[] = [];
  afterEach(() => {
    for (const monitor of running.splice(0)) monitor.stop();
  });

  async function startMonitor(configs: SourceConfig[]): Promise<SourceMonitor> {
    const monitor = new SourceMonitor(configs);
    running.push(monitor);
    await monitor.start();
    return monitor;
  }

  const health = (monitor: SourceMonitor, name: string, now = Date.now()) => monitor.health(now).find((h) => h.name === name)!;
  const item = (monitor: SourceMonitor, name: string, key: string) => monitor.views().find((v) => v.name === name)!.items.get(key);

  it('reads every source on start', async () => {
    const dir = folder();
    const [a, b] = fileSources(dir, ['a', 'b']);
    writeSource(a!.path!, { x: 1, y: 2 });
    writeSource(b!.path!, { x: 3 });
    const monitor = await startMonitor([a!, b!]);
    assert.deepEqual(monitor.names, ['a', 'b']);
    assert.equal(item(monitor, 'a', 'y')?.raw, '2');
    assert.equal(item(monitor, 'b', 'x')?.raw, '3');
    const state = health(monitor, 'a');
    assert.equal(state.state, 'active');
    assert.equal(state.error, null);
    assert.ok(state.last_check !== null, 'state.last_check !== null');
    assert.deepEqual(
      monitor.views().map((v) => v.healthy),
      [true, true],
    );
  });

  it('picks up a rewritten file and tells its listener', async () => {
    const [a] = fileSources(folder(), ['a']);
    writeSource(a!.path!, { x: 1 });
    const monitor = await startMonitor([a!]);
    let changes = 0;
    monitor.onChange(() => changes++);
    writeSource(a!.path!, { x: 42 });
    await eventually(() => item(monitor, 'a', 'x')?.raw === '42');
    assert.ok(changes >= 1, 'changes >= 1');
  });

  it('keeps the last good data of a corrupt file and reports it degraded without a path', async () => {
    const dir = folder();
    const [a] = fileSources(dir, ['a']);
    writeSource(a!.path!, { x: 7 });
    const monitor = await startMonitor([a!]);
    writeRaw(a!.path!, '{"items": {"x": 8,');
    await eventually(() => health(monitor, 'a').state === 'degraded');
    const error = health(monitor, 'a').error;
    assert.ok(error !== null && error.length > 0, 'error !== null && error.length > 0');
    assert.match(error, /invalid JSON/);
    assert.ok(!error.includes(dir), `error leaks a path: ${error}`);
    assert.ok(!error.includes('/'), `error leaks a path: ${error}`);
    assert.ok(!error.includes('a.json'), `error names the file: ${error}`);
    assert.equal(item(monitor, 'a', 'x')?.raw, '7');
    assert.equal(monitor.views()[0]!.healthy, false);
  });

  it('recovers to active when the file is good again', async () => {
    const [a] = fileSources(folder(), ['a']);
    writeSource(a!.path!, { x: 7 });
    const monitor = await startMonitor([a!]);
    writeRaw(a!.path!, 'not json');
    await eventually(() => health(monitor, 'a').state === 'degraded');
    writeSource(a!.path!, { x: 9 });
    await eventually(() => health(monitor, 'a').state === 'active');
    assert.equal(health(monitor, 'a').error, null);
    assert.equal(item(monitor, 'a', 'x')?.raw, '9');
    assert.equal(monitor.views()[0]!.healthy, true);
  });

  it('reports a missing file as down with a path-free error', async () => {
    const dir = folder();
    const [a, b] = fileSources(dir, ['missing', 'present']);
    writeSource(b!.path!, { x: 1 });
    const monitor = await startMonitor([a!, b!]);
    const state = health(monitor, 'missing');
    assert.equal(state.state, 'down');
    assert.equal(state.error, 'file not found');
    assert.equal(state.last_update, null);
    assert.equal(state.age_seconds, null);
    // One bad source does not stop the others.
    assert.equal(health(monitor, 'present').state, 'active');
  });

  it('reads a missing file once it appears', async () => {
    const [a] = fileSources(folder(), ['late']);
    const monitor = await startMonitor([a!]);
    assert.equal(health(monitor, 'late').state, 'down');
    writeSource(a!.path!, { x: 3 });
    await eventually(() => health(monitor, 'late').state === 'active');
    assert.equal(item(monitor, 'late', 'x')?.raw, '3');
  });

  it('reports a corrupt file with no good data as down', async () => {
    const [a] = fileSources(folder(), ['a']);
    writeRaw(a!.path!, '[]');
    const monitor = await startMonitor([a!]);
    const state = health(monitor, 'a');
    assert.equal(state.state, 'down');
    assert.match(state.error ?? '', /not a JSON object/);
  });

  it('reports data older than max_age_seconds as degraded', async () => {
    const [a] = fileSources(folder(), ['a'], 60);
    writeSource(a!.path!, { x: 1 }, ago(5 * 60_000));
    const monitor = await startMonitor([a!]);
    const state = health(monitor, 'a');
    assert.equal(state.state, 'degraded');
    assert.match(state.error ?? '', /older than 60 s/);
    assert.ok(state.age_seconds !== null && state.age_seconds >= 299 && state.age_seconds <= 302, 'state.age_seconds !== null && state.age_seconds >= 299 && state.age_seconds <= 302');
    // Still readable: the data is kept and the source is not marked failing.
    assert.equal(monitor.views()[0]!.healthy, true);
  });

  it('turns degraded as the clock passes max_age_seconds, and active again on fresh data', async () => {
    const [a] = fileSources(folder(), ['a'], 60);
    // The second document is stamped a minute ahead, for the health asked of a minute later.
    a!.clock_skew_seconds = 120;
    const written = Date.now() - 1000;
    writeSource(a!.path!, { x: 1 }, new Date(written));
    const monitor = await startMonitor([a!]);
    assert.equal(health(monitor, 'a', written + 59_000).state, 'active');
    assert.equal(health(monitor, 'a', written + 61_000).state, 'degraded');
    assert.equal(health(monitor, 'a', written + 61_000).age_seconds, 61);
    writeSource(a!.path!, { x: 2 }, new Date(written + 61_000));
    await eventually(() => item(monitor, 'a', 'x')?.raw === '2');
    assert.equal(health(monitor, 'a', written + 62_000).state, 'active');
  });

  it('keeps the last good data when the file is deleted, as degraded', async () => {
    const [a] = fileSources(folder(), ['a']);
    writeSource(a!.path!, { x: 1 });
    const monitor = await startMonitor([a!]);
    rmSync(a!.path!);
    await eventually(() => health(monitor, 'a').state === 'degraded');
    assert.equal(health(monitor, 'a').error, 'file not found');
    assert.equal(item(monitor, 'a', 'x')?.raw, '1');
  });
});

describe('RatesEngine with file sources and the bundled catalogue', () => {
  const USD = 'ir_fx_free_usd';
  const EMAMI = 'ir_coin_emami';
  const GOLD18 = 'ir_gold_18k_gram';
  const EUR = 'ir_fx_free_eur';
  const OUNCE = 'intl_xau_usd_spot';
  const HOUR = 3_600_000;

  let catalogue: Catalogue;
  const time = new ZoneTime('Asia/Tehran');
  const running: RatesEngine[] = [];

  before(() => {
    catalogue = catalogueWithoutBands();
  });
  afterEach(() => {
    for (const engine of running.splice(0)) engine.stop();
  });

  async function startEngine(
    names: string[],
    write: (paths: Record<string, string>) => void,
    priority: Record<string, string[]> = {},
    maxAgeSeconds = 300,
    tweak: (configs: SourceConfig[]) => void = () => {},
  ): Promise<{ engine: RatesEngine; paths: Record<string, string> }> {
    const configs = fileSources(folder(), names, maxAgeSeconds);
    tweak(configs);
    const paths = Object.fromEntries(configs.map((c) => [c.name, c.path!]));
    write(paths);
    const engine = new RatesEngine(catalogue, new SourceMonitor(configs), time, priority);
    running.push(engine);
    await engine.start();
    return { engine, paths };
  }

  const rate = (engine: RatesEngine, key: string) => engine.current().rates.get(key)!.rate;

  it('on its own clock, fails over when a value outlives its max age though no file changed', async () => {
    const { engine, paths } = await startEngine(
      ['a', 'b'],
      (p) => {
        writeSource(p.a!, { [USD]: 1000 });
        writeSource(p.b!, { [USD]: 2002 });
      },
      {},
      2,
      (configs) => (configs[1]!.max_age_seconds = 300),
    );
    // Stamped once the parse threads run (their start, a second or two on a busy machine, would eat the max age).
    writeSource(paths.a!, { [USD]: { value: 1001, updated_at: new Date(Date.now() - 500).toISOString() } });
    await eventually(() => rate(engine, 'usd_free').value === '1001', 4000);
    assert.equal(rate(engine, 'usd_free').source, 'a');
    // a's value passes its 2 s max age about 1.5 s from now; only the engine's tick can notice.
    await eventually(() => rate(engine, 'usd_free').source === 'b', 4000);
    assert.equal(rate(engine, 'usd_free').value, '2002');
  });

  it('resolves every reference of the catalogue', async () => {
    const { engine } = await startEngine(['a'], (p) => writeSource(p.a!, { [USD]: 1 }));
    const snapshot = engine.current();
    assert.equal(snapshot.rates.size, catalogue.size);
    assert.equal(snapshot.counts.ok + snapshot.counts.stale + snapshot.counts.unavailable, catalogue.size);
    assert.equal(snapshot.counts.ok, 1);
    assert.ok(snapshot.version >= 1, 'snapshot.version >= 1');
  });

  it('fails over per key to the next source when the first lacks the key', async () => {
    const { engine } = await startEngine(['a', 'b'], (p) => {
      writeSource(p.a!, { [USD]: 1001 });
      writeSource(p.b!, { [USD]: 1002, [EMAMI]: 2002 });
    });
    assert.deepEqual([rate(engine, 'usd_free').source, rate(engine, 'usd_free').value, rate(engine, 'usd_free').status], ['a', '1001', 'ok']);
    assert.deepEqual([rate(engine, 'coin_emami').source, rate(engine, 'coin_emami').value, rate(engine, 'coin_emami').status], ['b', '2002', 'ok']);
  });

  it("fails over when the first source's value is stale", async () => {
    const { engine } = await startEngine(['a', 'b'], (p) => {
      writeSource(p.a!, { [USD]: 1001, [GOLD18]: { value: 500, updated_at: ago(HOUR).toISOString() } });
      writeSource(p.b!, { [GOLD18]: 501 });
    });
    assert.equal(rate(engine, 'gold_18k').source, 'b');
    assert.equal(rate(engine, 'gold_18k').value, '501');
    assert.equal(rate(engine, 'usd_free').source, 'a');
  });

  it('marks a rate stale when no source is fresh, with the newest value', async () => {
    const { engine } = await startEngine(['a', 'b'], (p) => {
      writeSource(p.a!, { [OUNCE]: { value: 2650.5, updated_at: ago(2 * HOUR).toISOString() } });
      writeSource(p.b!, { [OUNCE]: { value: 2651.25, updated_at: ago(HOUR).toISOString() } });
    });
    const ounce = rate(engine, 'gold_ounce');
    assert.equal(ounce.status, 'stale');
    assert.equal(ounce.source, 'b');
    assert.equal(ounce.value, '2651.25');
    assert.ok(ounce.stale_seconds !== undefined && ounce.stale_seconds >= 3599 && ounce.stale_seconds <= 3605, 'ounce.stale_seconds !== undefined && ounce.stale_seconds >= 3599 && ounce.stale_seconds <= 3605');
    const json = JSON.parse(engine.current().rates.get('gold_ounce')!.json) as Record<string, unknown>;
    assert.equal(json.status, 'stale');
    assert.equal(typeof json.stale_seconds, 'number');
    assert.match(String(json.updated_at), /\+03:30$/);
  });

  it('marks a reference no source ever had as unavailable', async () => {
    const { engine } = await startEngine(['a'], (p) => writeSource(p.a!, { [USD]: 1 }));
    const eur = rate(engine, 'eur_free');
    assert.equal(eur.status, 'unavailable');
    assert.equal(eur.value, null);
  });

  it('moves to the next source when the first turns corrupt, and back when it recovers', async () => {
    const { engine, paths } = await startEngine(['a', 'b'], (p) => {
      writeSource(p.a!, { [USD]: 1001 });
      writeSource(p.b!, { [USD]: 1002 });
    });
    assert.equal(rate(engine, 'usd_free').source, 'a');
    writeRaw(paths.a!, '{broken');
    await eventually(() => rate(engine, 'usd_free').source === 'b');
    assert.equal(rate(engine, 'usd_free').value, '1002');
    writeSource(paths.a!, { [USD]: 1003 });
    await eventually(() => rate(engine, 'usd_free').value === '1003');
    assert.equal(rate(engine, 'usd_free').source, 'a');
  });

  it('serves the last known value as stale once every source drops the key', async () => {
    const { engine, paths } = await startEngine(['a'], (p) => writeSource(p.a!, { [USD]: 1001, [EUR]: 1100 }));
    assert.equal(rate(engine, 'eur_free').status, 'ok');
    writeSource(paths.a!, { [USD]: 1001 });
    await eventually(() => rate(engine, 'eur_free').status === 'stale');
    assert.equal(rate(engine, 'eur_free').value, '1100');
    assert.equal(rate(engine, 'eur_free').source, 'a');
  });

  it('puts listed sources first for a reference in source_priority', async () => {
    const { engine } = await startEngine(
      ['a', 'b'],
      (p) => {
        writeSource(p.a!, { [USD]: 1001, [EUR]: 1101 });
        writeSource(p.b!, { [USD]: 1002, [EUR]: 1102 });
      },
      { usd_free: ['b'] },
    );
    assert.equal(rate(engine, 'usd_free').source, 'b');
    assert.equal(rate(engine, 'eur_free').source, 'a');
  });

  it('keeps the same snapshot when nothing changed, and publishes a new one when a rate does', async () => {
    // EUR carries its own timestamp, so rewriting the file leaves that rate unchanged to the second.
    const eurAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
    const { engine, paths } = await startEngine(['a'], (p) => writeSource(p.a!, { [USD]: 1001, [EUR]: { value: 1100, updated_at: eurAt } }));
    const now = Date.now();
    const first = engine.rebuild(now);
    const second = engine.rebuild(now);
    assert.equal(second, first);
    assert.equal(second.version, first.version);
    assert.equal(engine.rebuild(now + 1000), first, 'only fresh and unavailable rates: nothing moves with the clock');

    const published: number[] = [];
    engine.onSnapshot((s) => published.push(s.version));
    writeSource(paths.a!, { [USD]: 1002, [EUR]: { value: 1100, updated_at: eurAt } });
    await eventually(() => rate(engine, 'usd_free').value === '1002');
    const next = engine.current();
    assert.ok(next.version > first.version, 'next.version > first.version');
    assert.ok(published.includes(next.version), 'published.includes(next.version)');
    // An unchanged rate keeps its prepared entry (and so its fingerprint).
    assert.equal(next.rates.get('eur_free'), first.rates.get('eur_free'));
    assert.notEqual(next.rates.get('usd_free'), first.rates.get('usd_free'));
  });
});
