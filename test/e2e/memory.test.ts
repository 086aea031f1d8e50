/**
 * What a key may send within its plan must not grow the server's memory
 * without bound: every cache is bounded in bytes and entries and keyed on
 * normalised input. A real `nerkh serve` (the zero-config demo, so the demo's
 * pro key, recording as a single node does) is sent requests that each would
 * have added cache entries, and its heap is read after a full collection,
 * forced through a probe loaded into the process (`--expose-gc`, a signal
 * handler), so the figure is what the process holds, not garbage not yet
 * collected. The config raises the pro plan's limits (so the requests take
 * seconds, and reach any reference and any part of the past) and brings the
 * basic plan's refresh interval to 10 s, so the snapshots kept for the slowest
 * tier settle within seconds of the start rather than a minute; the log
 * level is warn, so no log line waits in a buffer while heaps are read.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, pollUntil, readCatalogue, ROOT, sleep, startServer, type ServerProcess } from './helpers.js';

const MB = 1024 * 1024;
const MINUTE = 60_000;
const HOUR = 3_600_000;
/** The heap is first read this long after the start at the earliest: the live snapshots kept have filled by then. */
const SETTLE_AFTER_START_MS = 20_000;
/** Requests in flight at once. */
const CONCURRENCY = 8;
/** On a signal, two full collections, then the heap and RSS on one line of stdout. */
const HEAP_PROBE =
  'data:text/javascript,' +
  encodeURIComponent(`process.on('SIGUSR2', () => { globalThis.gc(); globalThis.gc(); const m = process.memoryUsage(); process.stdout.write('heap-after-gc ' + m.heapUsed + ' ' + m.rss + '\\n'); });`);

interface Heap {
  heapMb: number;
  rssMb: number;
}

describe('e2e: memory stays bounded whatever ranges and key lists a key sends', () => {
  const { popular } = readCatalogue();
  const [first, second] = popular as [string, string];
  // The demo writes its past one reference at a time, in catalogue order: this one comes last.
  const levels = JSON.parse(readFileSync(join(ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
  const writtenLast = loadCatalogue(BUNDLED_CATALOGUE).references.filter((reference) => levels[reference.source_key] !== undefined).at(-1)!.key;
  const data = tempDir('nerkh-e2e-memory-data-');
  const cwd = tempDir('nerkh-e2e-memory-cwd-');
  let server: ServerProcess;
  let key = '';

  /** The heap after a full collection, and RSS then. */
  const reading = async (): Promise<Heap> => {
    const seen = server.stdout.match(/heap-after-gc /g)?.length ?? 0;
    server.child.kill('SIGUSR2');
    await pollUntil(async () => server.stdout.match(/heap-after-gc /g)?.length ?? 0, (n) => n > seen, 10_000, 20);
    const [, heapUsed, rss] = [...server.stdout.matchAll(/heap-after-gc (\d+) (\d+)/g)].at(-1)!;
    return { heapMb: Number(heapUsed) / MB, rssMb: Number(rss) / MB };
  };
  /** The least of five readings over two seconds: the live snapshots kept (and their answers) vary as the feed moves. */
  const heap = async (): Promise<Heap> => {
    const readings: Heap[] = [];
    for (let i = 0; i < 5; i++) {
      if (i > 0) await sleep(500);
      readings.push(await reading());
    }
    return readings.reduce((least, next) => (next.heapMb < least.heapMb ? next : least));
  };

  /** Kept-alive connections, one per worker: node:http costs the test process about half of what fetch does per request, and the thousands of them are the file's CPU. */
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  /** One GET with the key; resolves its status once the body is read. */
  const status = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const sent = request(`${server.base}${path}`, { agent, headers: { 'x-api-key': key }, timeout: 10_000 }, (response) => {
        response.on('error', reject).on('end', () => resolve(response.statusCode!)).resume();
      });
      sent.on('timeout', () => sent.destroy(new Error(`no answer within 10 s: ${path.slice(0, 200)}`))).on('error', reject).end();
    });

  /** Send `count` requests, `CONCURRENCY` at a time; returns how many got each status. */
  const send = async (count: number, path: (i: number) => string): Promise<Record<number, number>> => {
    const statuses: Record<number, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const code = await status(path(next++));
        statuses[code] = (statuses[code] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return statuses;
  };

  before(async () => {
    assertBuilt();
    // The demo setup (no sources configured); pro: 1,000,000 requests a minute, no daily cap, every reference, no history window.
    const plans = { basic: { refresh_interval_seconds: 10 }, pro: { requests_per_minute: 1_000_000, requests_per_day: null, max_references: null, history_days: null } };
    writeFileSync(join(cwd.path, 'nerkh.config.json'), JSON.stringify({ plans }));
    server = await startServer({ NERKH_DATA_DIR: data.path, NERKH_LOG_LEVEL: 'warn' }, { cwd: cwd.path, nodeArgs: ['--expose-gc', '--import', HEAP_PROBE] });
    // With a config file there is no demo account: one of our own on pro.
    const cli = cleanEnv({ NERKH_DATA_DIR: data.path, NERKH_CONFIG: join(cwd.path, 'nerkh.config.json'), NERKH_LOG_LEVEL: 'warn' });
    await cliOk(cli, ['accounts', 'add', 'memory', '--plan', 'pro']);
    key = (JSON.parse((await cliOk(cli, ['keys', 'issue', 'memory', '--json'])).stdout) as { key: string }).key;
    // The demo's 30-day past is written beside the server: measure once it is.
    const days = async () => {
      const response = await fetch(`${server.base}/v1/rates/${writtenLast}/history?interval=1d`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5000) });
      return response.ok ? ((await response.json()) as { count: number }).count : -response.status;
    };
    await pollUntil(days, (count) => count >= 29, 60_000, 250);
    // Then until the snapshots kept for the 10 s tier have filled (some seconds after the start) and the heap holds still.
    await sleep(SETTLE_AFTER_START_MS - (Date.now() - server.startedAt));
    let last = await heap();
    for (let tries = 0; tries < 10; tries++) {
      await sleep(1000);
      const next = await heap();
      if (Math.abs(next.heapMb - last.heapMb) < 0.5) break;
      last = next;
    }
  });

  after(async () => {
    agent.destroy();
    await server?.kill();
    data.cleanup();
    cwd.cleanup();
  });

  it('history: ranges moving into the future and back into the empty past leave the heap where it settled', async (t) => {
    const now = Date.now();
    // A thousand minutes, each request further into the future: the old reader kept every block of them.
    const future = (i: number) => {
      const from = now + (i + 1) * 1000 * MINUTE;
      return `/v1/rates/${first}/history?interval=1m&from=${new Date(from).toISOString()}&to=${new Date(from + 999 * MINUTE).toISOString()}`;
    };
    // Some thousand hours (short of it, so an hour lost to a clock change never makes 1,001), each request further back, long before the demo's past: every block empty.
    const past = (i: number) => {
      const from = now - (i + 2) * 1000 * HOUR;
      return `/v1/rates/${first}/history?interval=1h&from=${new Date(from).toISOString()}&to=${new Date(from + 990 * HOUR).toISOString()}`;
    };
    // Ranges ending in the future: read up to now.
    const straddling = (i: number) => `/v1/rates/${first}/history?interval=1m&from=${new Date(now - 500 * MINUTE).toISOString()}&to=${new Date(now + (i + 1) * MINUTE).toISOString()}`;
    const mixed = (offset: number) => (i: number) => [future, past, straddling][i % 3]!(offset + i);

    const start = await heap();
    // Warm up: the caches fill to their bounds (1,100 ranges of the empty past, five blocks each: 5,500, past the block cache's 5,000),
    // then every path is compiled (600 of the three kinds, after those ranges).
    const warm = { past: await send(1100, past), mixed: await send(600, mixed(1100)) };
    const settled = await heap();
    const statuses = await send(9000, mixed(4500));
    const end = await heap();
    const growth = end.heapMb - settled.heapMb;
    t.diagnostic(
      `heap after GC: ${start.heapMb.toFixed(1)} MB at start, ${settled.heapMb.toFixed(1)} MB after 1,700 requests (past, then future, past, straddling), ` +
        `${end.heapMb.toFixed(1)} MB after 9,000 more: +${growth.toFixed(2)} MB; RSS ${start.rssMb.toFixed(0)} → ${end.rssMb.toFixed(0)} MB; ` +
        `statuses ${JSON.stringify(warm)} then ${JSON.stringify(statuses)}`,
    );
    assert.ok(end.heapMb - start.heapMb < 30, `the heap grew ${(end.heapMb - start.heapMb).toFixed(1)} MB over 10,700 history requests`);
    // Before the caches were bounded, each of these requests to the future or the past kept about 1.1–1.7 KB, with no end: 6,000 of them 4.4 MB.
    // Here the heap moves only with the live feed (steps of up to about 1.5 MB seen, whatever the requests).
    assert.ok(growth < 3, `once the caches are full the heap must stay put; it grew ${growth.toFixed(2)} MB over 9,000 more requests`);
    assert.deepEqual(warm, { past: { 200: 1100 }, mixed: { 200: 400, 400: 200 } });
    assert.deepEqual(statuses, { 200: 6000, 400: 3000 }, 'every future "from" refused, every other range answered');
  });

  it('detail: a key list spelled out to 13 KB in a thousand ways is kept once', async (t) => {
    // Each segment names the same two keys, in a spelling of its own (repeats, case).
    const spelling = (i: number) => `${`${first},`.repeat(1400 + (i % 40))}${`${first.toUpperCase()},`.repeat(Math.floor(i / 40))}${second}`;
    assert.ok(spelling(0).length > 12_000, 'spelling(0).length > 12_000');
    // Warm up: every path of the answer is compiled (spellings of their own, after the thousand measured).
    await send(200, (i) => `/v1/rates/${spelling(1000 + i)}`);
    const settled = await heap();
    const statuses = await send(1000, (i) => `/v1/rates/${spelling(i)}`);
    const end = await heap();
    const growth = end.heapMb - settled.heapMb;
    t.diagnostic(`heap after GC: ${settled.heapMb.toFixed(1)} → ${end.heapMb.toFixed(1)} MB (+${growth.toFixed(2)} MB) over 1,000 spellings of ${spelling(999).length} characters; ${JSON.stringify(statuses)}`);
    // Kept under the raw segment, these 1,000 answers held 14 MB, and 2,000 a snapshot for each of the last four would be kept.
    assert.ok(growth < 3, `the heap grew ${growth.toFixed(2)} MB`);
    assert.deepEqual(statuses, { 200: 1000 });
  });

  it('still answers /healthz and a history request promptly', async () => {
    const health = await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(5000) });
    assert.equal(health.status, 200);
    const history = await fetch(`${server.base}/v1/rates/${first}/history?interval=1d`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5000) });
    assert.equal(history.status, 200);
    const body = (await history.json()) as { count: number };
    assert.ok(body.count >= 30, `${body.count} daily candles`);
  });
});
