/**
 * Sources that are honest about their health: a document with no usable value
 * is unhealthy and never replaces the last good data; a few bad items are
 * counted but leave the source active; state changes and read failures reach
 * the process logger. Real files, a real local HTTP server, a real pino logger.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Logger } from '../../src/log.js';
import { assessHealth, type HealthFacts } from '../../src/sources/health.js';
import type { ScreenedOut } from '../../src/domain/resolve.js';
import { SourceMonitor, type ScreeningVerdicts, type SourceConfig, type SourceHealth } from '../../src/sources/monitor.js';
import { countScreening } from '../../src/sources/screening-count.js';
import { eventually, fileSources, tempDir, writeRaw, writeSource } from '../support/env.js';
import { testReference } from './fixtures.js';

const root = tempDir('nerkh-source-health-');
let folderCount = 0;
after(() => root.cleanup());

const running: SourceMonitor[] = [];
afterEach(() => {
  for (const monitor of running.splice(0)) monitor.stop();
});

interface LogLine {
  level: number;
  msg: string;
  part?: string;
  source?: string;
  from?: string | null;
  to?: string;
  reason?: string | null;
  failures?: number;
}

/** The process logger as the runtime makes it (pino), writing into an array instead of stdout. */
function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger: Logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

async function startMonitor(configs: SourceConfig[], logger?: Logger): Promise<SourceMonitor> {
  const monitor = new SourceMonitor(configs, undefined, { logger });
  running.push(monitor);
  await monitor.start();
  return monitor;
}

function oneFileSource(name = 'a'): SourceConfig {
  return fileSources(join(root.path, `t${folderCount++}`), [name])[0]!;
}

const health = (monitor: SourceMonitor) => monitor.health(Date.now())[0]!;
const items = (monitor: SourceMonitor) => monitor.views()[0]!.items;

describe('a file source that parses but yields no usable value', () => {
  it('is degraded with the reason when `items` is empty, and its last good data stays', async () => {
    const source = oneFileSource();
    writeSource(source.path!, { x: 101, y: 202 });
    const monitor = await startMonitor([source]);
    const goodTime = health(monitor).last_update;

    writeSource(source.path!, {});
    await eventually(() => health(monitor).state === 'degraded');
    const state = health(monitor);
    assert.equal(state.error, 'no usable values (items is empty)');
    assert.equal(state.last_update, goodTime, 'the last good data is not replaced');
    assert.deepEqual([...items(monitor)].map(([k, v]) => [k, v.raw]), [['x', '101'], ['y', '202']]);
    assert.equal(monitor.views()[0]!.healthy, false, 'its kept data no longer serves as fresh');
  });

  it('is degraded with the dropped count when every item is insane', async () => {
    const source = oneFileSource();
    writeSource(source.path!, { x: 101 });
    const monitor = await startMonitor([source]);
    writeRaw(source.path!, `{"updated_at":"${new Date().toISOString()}","items":{"x":0,"y":-3,"z":1e999,"w":"12","v":{"value":5,"updated_at":"2099-01-01T00:00:00Z"}}}`);
    await eventually(() => health(monitor).state === 'degraded');
    assert.equal(health(monitor).error, 'no usable values (5 dropped, 1 of them stamped ahead of the clock)');
    assert.equal(health(monitor).dropped, 5);
    assert.equal(items(monitor).get('x')?.raw, '101');
  });

  it('is down when it never had data', async () => {
    const source = oneFileSource();
    writeSource(source.path!, {});
    const monitor = await startMonitor([source]);
    assert.equal(health(monitor).state, 'down');
    assert.equal(health(monitor).error, 'no usable values (items is empty)');
    assert.equal(items(monitor).size, 0);
  });

  it('is active again, with the new values, once a usable document is written', async () => {
    const source = oneFileSource();
    writeSource(source.path!, { x: 101 });
    const monitor = await startMonitor([source]);
    writeSource(source.path!, { x: -1 });
    await eventually(() => health(monitor).state === 'degraded');
    writeSource(source.path!, { x: 103 });
    await eventually(() => health(monitor).state === 'active');
    assert.equal(health(monitor).error, null);
    assert.equal(health(monitor).dropped, 0);
    assert.equal(items(monitor).get('x')?.raw, '103');
    assert.equal(monitor.views()[0]!.healthy, true);
  });
});

describe('a partial document (some items dropped)', () => {
  it('keeps the source active and its good items used, with the dropped count in `error`', async () => {
    const source = oneFileSource();
    writeSource(source.path!, { x: 101, y: 0, z: -5 });
    const monitor = await startMonitor([source]);
    const state = health(monitor);
    assert.equal(state.state, 'active');
    assert.equal(state.error, '2 values dropped');
    assert.equal(state.dropped, 2);
    assert.equal(items(monitor).get('x')?.raw, '101');
    assert.equal(monitor.views()[0]!.healthy, true);
    writeSource(source.path!, { x: 101, y: 0 });
    await eventually(() => health(monitor).dropped === 1);
    assert.equal(health(monitor).error, '1 value dropped');
  });
});

describe('the monitor, the one owner of a source’s health', () => {
  const references = [testReference({ key: 'x_free', source_key: 'x', min: 100, max: 1000 }), testReference({ key: 'y_free', source_key: 'y', min: 100, max: 1000 })];
  const outlier = (...sources: string[]): ReadonlyMap<string, ScreenedOut> => new Map(sources.map((name) => [name, 'outlier' as const]));
  const held = (source: string): ReadonlyMap<string, ScreenedOut> => new Map([[source, 'held' as const]]);
  const verdicts = (entries: [string, ReadonlyMap<string, ScreenedOut>][]): ScreeningVerdicts => new Map(entries);

  it('counts the kept values against the bands of the references it is given, as each document is read', async () => {
    const source = oneFileSource();
    writeSource(source.path!, { x: 500, y: 5 });
    const monitor = new SourceMonitor([source], undefined, { references });
    running.push(monitor);
    await monitor.start();
    assert.deepEqual([health(monitor).out_of_range, health(monitor).error], [1, '1 value out of range']);
    writeSource(source.path!, { x: 5, y: 6 });
    await eventually(() => health(monitor).state === 'degraded');
    assert.equal(health(monitor).error, 'no usable values (2 out of range)');
  });

  it('counts what screening rejected in each snapshot it hears, each new outlier once in the total', async () => {
    const [a, b] = fileSources(join(root.path, `t${folderCount++}`), ['a', 'b']);
    writeSource(a!.path!, { x: 500 });
    writeSource(b!.path!, { x: 500 });
    const monitor = new SourceMonitor([a!, b!], undefined, { references });
    running.push(monitor);
    const told: SourceHealth[][] = [];
    monitor.onHealth((health, changed) => {
      if (changed) told.push([...health]);
    });
    await monitor.start();
    const of = (name: string) => monitor.health(Date.now()).find((h) => h.name === name)!;

    monitor.hearScreening(verdicts([['x_free', outlier('a')], ['y_free', held('b')]]));
    assert.deepEqual([of('a').outliers, of('a').outliers_total, of('a').error], [1, 1, '1 value rejected as outlier']);
    assert.deepEqual([of('b').held, of('b').error], [1, '1 jump held for confirmation']);
    assert.equal(told.at(-1)!.find((h) => h.name === 'a')!.outliers, 1, 'the listeners were told');
    const toldBefore = told.length;
    // The same verdicts again: still one outlier now, none new; nothing new to tell.
    monitor.hearScreening(verdicts([['x_free', outlier('a')]]));
    assert.deepEqual([of('a').outliers, of('a').outliers_total, of('b').held], [1, 1, 0]);
    monitor.hearScreening(new Map());
    monitor.hearScreening(verdicts([['x_free', outlier('a')]]));
    assert.deepEqual([of('a').outliers, of('a').outliers_total], [1, 2], 'rejected anew after a snapshot without it');
    assert.ok(told.length > toldBefore, 'told.length > toldBefore');
    const quiet = told.length;
    monitor.hearScreening(verdicts([['x_free', outlier('a')]]));
    assert.equal(told.length, quiet, 'unchanged health is not told as a change');
  });

  it('tells every read, as a change when it moved the health', async () => {
    const source = oneFileSource();
    writeSource(source.path!, { x: 500 });
    const monitor = new SourceMonitor([source], undefined, { references });
    running.push(monitor);
    const told: { health: SourceHealth; changed: boolean }[] = [];
    monitor.onHealth((health, changed) => told.push({ health: health[0]!, changed }));
    await monitor.start();
    assert.deepEqual([told.at(-1)!.health.state, told.at(-1)!.changed], ['active', true]);
    const checked = told.at(-1)!.health.last_check!;
    // The file is polled every second: later reads are told with their last check, as no change.
    await eventually(() => told.at(-1)!.health.last_check! > checked, 4000);
    assert.equal(told.at(-1)!.changed, false);
    writeRaw(source.path!, '{"updated_at": "broken');
    await eventually(() => told.at(-1)!.health.state === 'degraded');
    assert.equal(told.find((t) => t.health.state === 'degraded')!.changed, true);
  });

  it('counts screening per source: outliers, holds, and outliers new since the snapshot before', () => {
    const before = verdicts([['x_free', outlier('a')]]);
    const now = verdicts([['x_free', outlier('a', 'b')], ['y_free', held('a')]]);
    assert.deepEqual(Object.fromEntries(countScreening(now, before)), { a: { outliers: 1, held: 1, newOutliers: 0 }, b: { outliers: 1, held: 0, newOutliers: 1 } });
  });
});

describe('assessHealth', () => {
  const NOW = Date.parse('2026-11-21T10:00:00Z');
  const facts = (over: Partial<HealthFacts>): HealthFacts => ({ name: 's', maxAgeSeconds: 60, dataTime: NOW - 10_000, readError: null, lastCheck: NOW, dropped: 0, bands: { inBand: 10, outOfBand: 0 }, outliers: 0, held: 0, outliersTotal: 0, ...over });

  it('is active with no error when all is well', () => {
    assert.deepEqual(
      [assessHealth(facts({}), NOW).state, assessHealth(facts({}), NOW).error],
      ['active', null],
    );
  });

  it('names a few out-of-range values without making the source unhealthy', () => {
    const health = assessHealth(facts({ bands: { inBand: 8, outOfBand: 2 }, dropped: 1 }), NOW);
    assert.equal(health.state, 'active');
    assert.equal(health.error, '1 value dropped; 2 values out of range');
    assert.equal(health.out_of_range, 2);
  });

  it('is degraded when every value it holds for the catalogue is out of range', () => {
    const health = assessHealth(facts({ bands: { inBand: 0, outOfBand: 12 } }), NOW);
    assert.equal(health.state, 'degraded');
    assert.equal(health.error, 'no usable values (12 out of range)');
  });

  it('says why first, then what was lost', () => {
    const stale = assessHealth(facts({ dataTime: NOW - 120_000, bands: { inBand: 3, outOfBand: 1 } }), NOW);
    assert.equal(stale.state, 'degraded');
    assert.equal(stale.error, 'data older than 60 s; 1 value out of range');
    const failing = assessHealth(facts({ readError: 'no usable values (4 dropped)', dropped: 4 }), NOW);
    assert.equal(failing.state, 'degraded');
    assert.equal(failing.error, 'no usable values (4 dropped)', 'the dropped count is said once');
  });

  it('judges no band while the source holds nothing the catalogue knows', () => {
    assert.equal(assessHealth(facts({ bands: { inBand: 0, outOfBand: 0 } }), NOW).state, 'active');
    assert.equal(assessHealth(facts({ bands: null }), NOW).state, 'active');
  });
});

describe('logging through the process logger', () => {
  it('logs each state change with its reason, and each new read failure', async () => {
    const { logger, lines } = recordingLogger();
    const source = oneFileSource('feed');
    writeSource(source.path!, { x: 101 });
    const monitor = await startMonitor([source], logger);
    assert.equal(lines.length, 0, 'an active start is not news');

    writeSource(source.path!, {});
    await eventually(() => lines.some((l) => l.to === 'degraded'));
    writeRaw(source.path!, '{"items": {');
    await eventually(() => lines.filter((l) => l.msg.includes('read failed')).length === 2);
    writeSource(source.path!, { x: 102 });
    await eventually(() => lines.some((l) => l.to === 'active'));

    const changes = lines.filter((l) => l.to !== undefined).map((l) => [l.level, l.source, l.from, l.to, l.reason]);
    assert.deepEqual(changes, [
      [40, 'feed', 'active', 'degraded', 'no usable values (items is empty)'],
      [30, 'feed', 'degraded', 'active', null],
    ]);
    const failures = lines.filter((l) => l.msg.includes('read failed')).map((l) => [l.level, l.part, l.source, l.reason]);
    assert.deepEqual(failures, [
      [40, 'sources', 'feed', 'no usable values (items is empty)'],
      [40, 'sources', 'feed', failures[1]![3]],
    ]);
    assert.match(String(failures[1]![3]), /^invalid JSON/);
    assert.ok(health(monitor).state === 'active', 'health(monitor).state === \'active\'');
  });

  it('logs a source that starts down, and the clock taking a source past its max age', async () => {
    const { logger, lines } = recordingLogger();
    const [missing, ageing] = fileSources(join(root.path, `t${folderCount++}`), ['missing', 'ageing'], 2);
    writeSource(ageing!.path!, { x: 1 }, new Date(Date.now() - 1000));
    await startMonitor([missing!, ageing!], logger);
    assert.deepEqual(
      lines.filter((l) => l.to !== undefined).map((l) => [l.source, l.from, l.to, l.reason]),
      [['missing', null, 'down', 'file not found']],
    );
    // No file changes: only the monitor's own clock check can see the data ageing past 2 s.
    await eventually(() => lines.some((l) => l.source === 'ageing' && l.to === 'degraded'), 4000);
    assert.equal(lines.find((l) => l.source === 'ageing' && l.to === 'degraded')?.reason, 'data older than 2 s');
  });
});

describe('an HTTP source serving a document with no usable value', () => {
  let server: Server;
  let base: string;
  let body = '';
  let etag = '';
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Requests the upstream got. */
  let asked = 0;

  before(async () => {
    // Honours If-None-Match as a real upstream would: 304 only when the client holds the current document.
    handler = (req, res) => {
      asked++;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', etag });
      res.end(body);
    };
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const serve = (items: Record<string, unknown>, tag: string) => {
    body = JSON.stringify({ updated_at: new Date().toISOString(), items });
    etag = tag;
  };

  it('is degraded and stays so while the upstream keeps serving it, then recovers', async () => {
    serve({ x: 101 }, '"good-1"');
    const { logger, lines } = recordingLogger();
    const monitor = await startMonitor([{ name: 'remote', type: 'http', url: `${base}/feed`, max_age_seconds: 300, poll_seconds: 0.05, timeout_seconds: 1, max_backoff_seconds: 0.1 }], logger);
    assert.equal(health(monitor).state, 'active');

    serve({ x: 0, y: -1 }, '"empty-1"');
    await eventually(() => health(monitor).state === 'degraded');
    assert.equal(health(monitor).error, 'no usable values (2 dropped)');
    // Several more polls: the refused document's ETag was not kept, so no 304 can pass it off as the good one.
    // A source is asked again only once its read before has ended: the fourth request says three were read.
    const askedBefore = asked;
    await eventually(() => asked >= askedBefore + 4, 5000, 10);
    assert.equal(health(monitor).state, 'degraded');
    assert.equal(items(monitor).get('x')?.raw, '101');
    const repeats = lines.filter((l) => l.msg.includes('read failed again'));
    assert.ok(repeats.length >= 1 && repeats.every((l) => l.level === 20), 'the same failure again is logged at debug');
    assert.equal(lines.filter((l) => l.level === 40 && l.msg.includes('read failed')).length, 1);

    serve({ x: 105 }, '"good-2"');
    await eventually(() => health(monitor).state === 'active');
    assert.equal(items(monitor).get('x')?.raw, '105');
  });
});

describe('a source whose clock runs ahead', () => {
  it('serves a value stamped a few seconds ahead as updated now; drops one stamped minutes ahead, naming it on the status line and in the log; refuses a document dated minutes ahead', async () => {
    const { logger, lines } = recordingLogger();
    const source = oneFileSource('fast');
    const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
    writeSource(source.path!, { near: { value: 1, updated_at: ahead(10_000) }, far: { value: 2, updated_at: ahead(4 * 60_000) }, ok: 3 }, new Date(Date.now() - 1000));
    const before = Date.now();
    const monitor = await startMonitor([source], logger);
    const near = items(monitor).get('near');
    assert.ok(near && near.updatedAt >= before && near.updatedAt <= Date.now(), 'clamped to the receive time');
    assert.equal(items(monitor).has('far'), false);
    assert.deepEqual([health(monitor).state, health(monitor).error], ['active', '1 value dropped (1 stamped ahead of the clock)']);
    assert.ok(lines.some((l) => l.level === 40 && l.msg === 'source fast: 1 value stamped more than 30 s ahead of the clock dropped'), JSON.stringify(lines));

    writeSource(source.path!, { ok: 4 }, ahead(5 * 60_000));
    await eventually(() => health(monitor).state === 'degraded');
    assert.equal(health(monitor).error, 'updated_at is 5 min ahead of the clock (more than 30 s allowed)');
    assert.equal(items(monitor).get('ok')?.raw, '3', 'the last good data is kept');
  });
});

describe('item keys that match no reference', () => {
  it('are counted and named in health, warned about once per distinct set, and the clearing is told', async () => {
    const { logger, lines } = recordingLogger();
    const source = oneFileSource('desk');
    writeSource(source.path!, { usd_free: 1, usd_fre: 2, eur_fre: 3 });
    const monitor = new SourceMonitor([source], undefined, { logger, wantedKeys: new Set(['usd_free', 'eur_free']) });
    running.push(monitor);
    await monitor.start();
    assert.deepEqual([health(monitor).state, health(monitor).error, health(monitor).unknown_keys], ['active', null, { count: 2, sample: ['usd_fre', 'eur_fre'] }]);
    const warnings = () => lines.filter((l) => l.level === 40 && /match(es)? no reference/.test(l.msg));
    assert.deepEqual(
      warnings().map((l) => l.msg),
      ['source desk: 2 item keys match no reference: usd_fre, eur_fre'],
    );

    // The same keys with new values: no new warning.
    writeSource(source.path!, { usd_free: 4, usd_fre: 5, eur_fre: 6 });
    await eventually(() => items(monitor).get('usd_free')?.raw === '4');
    assert.equal(warnings().length, 1);

    // Another set: warned again.
    writeSource(source.path!, { usd_free: 7, eur_fre: 8 });
    await eventually(() => health(monitor).unknown_keys.count === 1);
    assert.deepEqual(warnings().map((l) => l.msg).slice(1), ['source desk: 1 item key matches no reference: eur_fre']);

    // Fixed: the health says none, and the log says so once.
    writeSource(source.path!, { usd_free: 9, eur_free: 10 });
    await eventually(() => health(monitor).unknown_keys.count === 0);
    assert.deepEqual(health(monitor).unknown_keys, { count: 0, sample: [] });
    assert.equal(lines.filter((l) => l.level === 30 && l.msg === 'source desk: every item key matches a reference now').length, 1);
    assert.equal(warnings().length, 2);
  });

  it("a failed read keeps the kept document's unknown keys (they describe the data in use)", async () => {
    const source = oneFileSource('desk');
    writeSource(source.path!, { usd_free: 1, usd_fre: 2 });
    const monitor = new SourceMonitor([source], undefined, { wantedKeys: new Set(['usd_free']) });
    running.push(monitor);
    await monitor.start();
    writeRaw(source.path!, '{"items":');
    await eventually(() => health(monitor).state === 'degraded');
    assert.deepEqual(health(monitor).unknown_keys, { count: 1, sample: ['usd_fre'] });
  });
});
