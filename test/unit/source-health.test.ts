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
import { SourceMonitor, type SourceConfig } from '../../src/sources/monitor.js';
import { eventually, fileSources, tempDir, writeRaw, writeSource } from '../support/env.js';

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
    assert.equal(health(monitor).error, 'no usable values (5 dropped)');
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
    assert.ok(health(monitor).state === 'active');
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

  before(async () => {
    // Honours If-None-Match as a real upstream would: 304 only when the client holds the current document.
    handler = (req, res) => {
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
    await new Promise((r) => setTimeout(r, 400));
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
