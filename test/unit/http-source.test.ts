import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ZoneTime } from '../../src/domain/time.js';
import { compileFormat } from '../../src/sources/formats/compile.js';
import { HttpSourceReader, nextDelayMs } from '../../src/sources/http.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { SourceFormatError } from '../../src/sources/parse.js';
import { describeReadError, SourceReadError } from '../../src/sources/reader.js';
import { eventually } from '../support/env.js';
import { HANG_MS } from '../support/deadline.js';

/** Fixtures are dated relative to now, so they never drift into the future or go stale. */
const HOUR_AGO = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('HttpSourceReader', () => {
  let server: Server;
  let base: string;
  let handler: Handler = (_req, res) => res.end();
  const seen: IncomingHttpHeaders[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    seen.length = 0;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function json(body: string, headers: Record<string, string> = {}): Handler {
    return (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      res.end(body);
    };
  }

  it('parses a good document, keeping exact digits', async () => {
    handler = json(`{"updated_at":"${HOUR_AGO.toISOString()}","items":{"a":300.50,"b":{"value":12345678901234567890},"bad":-1}}`);
    const data = await new HttpSourceReader(`${base}/feed`, 2000).readIfChanged();
    assert.ok(data, 'data');
    assert.equal(data.items.get('a')?.raw, '300.50');
    assert.equal(data.items.get('b')?.raw, '12345678901234567890');
    assert.equal(data.items.get('a')?.updatedAt, HOUR_AGO.getTime());
    assert.equal(data.dropped, 1);
    assert.equal(seen[0]?.accept, 'application/json');
  });

  it('asks for the format it reads, and reads it: ECB XML and CSV, gzip-compressed or not', async () => {
    const zone = new ZoneTime('Asia/Tehran');
    const yesterday = new Date(HOUR_AGO.getTime() - 86_400_000).toISOString().slice(0, 10);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml', 'content-encoding': 'gzip' });
      res.end(gzipSync(`<?xml version="1.0" encoding="UTF-8"?><gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><Cube><Cube time="${yesterday}"><Cube currency="USD" rate="1.0823"/><Cube currency="JPY" rate="162.45"/></Cube></Cube></gesmes:Envelope>`));
    };
    const ecb = await new HttpSourceReader(`${base}/eurofxref-daily.xml`, 2000, { format: compileFormat({ format: 'ecb', items: { eurusd: 'USD', usdjpy: 'JPY/USD' } }, zone) }).readIfChanged();
    assert.deepEqual([...ecb!.items].map(([key, value]) => [key, value.raw]), [['eurusd', '1.0823'], ['usdjpy', '150.097016']]);
    assert.equal(seen[0]?.accept, 'application/xml, text/xml;q=0.9');

    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv', 'last-modified': HOUR_AGO.toUTCString() });
      res.end('usd,"1,125,050"\n');
    };
    const csv = await new HttpSourceReader(`${base}/prices.csv`, 2000, { format: compileFormat({ format: 'csv' }, zone) }).readIfChanged();
    assert.deepEqual(csv!.items.get('usd'), { raw: '1125050', value: 1125050, updatedAt: HOUR_AGO.getTime() });
    assert.equal(seen[1]?.accept, 'text/csv, text/plain;q=0.9');
  });

  it('sends If-None-Match with the previous ETag and returns null on 304', async () => {
    handler = (req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304);
        res.end();
        return;
      }
      res.writeHead(200, { etag: '"v1"', 'content-type': 'application/json' });
      res.end('{"items":{"a":1}}');
    };
    const reader = new HttpSourceReader(`${base}/feed`, 2000);
    assert.ok(await reader.readIfChanged(), 'await reader.readIfChanged()');
    assert.equal(seen[0]?.['if-none-match'], undefined);
    assert.equal(await reader.readIfChanged(), null);
    assert.equal(seen[1]?.['if-none-match'], '"v1"');
    assert.equal(await reader.readIfChanged(), null);
  });

  it('sends If-Modified-Since and dates bare numbers with Last-Modified', async () => {
    const lastModified = HOUR_AGO.toUTCString();
    handler = json('{"items":{"a":5}}', { 'last-modified': lastModified });
    const reader = new HttpSourceReader(`${base}/feed`, 2000);
    const data = await reader.readIfChanged();
    assert.equal(data?.items.get('a')?.updatedAt, HOUR_AGO.getTime());
    await reader.readIfChanged();
    assert.equal(seen[1]?.['if-modified-since'], lastModified);
  });

  it('keeps the previous ETag when a document is bad', async () => {
    let call = 0;
    handler = (_req, res) => {
      call++;
      if (call === 1) json('{"items":{"a":1}}', { etag: '"good"' })(_req, res);
      else json('{"items":', { etag: '"broken"' })(_req, res);
    };
    const reader = new HttpSourceReader(`${base}/feed`, 2000);
    assert.ok(await reader.readIfChanged(), 'await reader.readIfChanged()');
    await assert.rejects(reader.readIfChanged(), SourceFormatError);
    await assert.rejects(reader.readIfChanged(), SourceFormatError);
    assert.equal(seen[2]?.['if-none-match'], '"good"');
  });

  it('throws on HTTP 500', async () => {
    handler = (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom at /srv/secret/path');
    };
    const reader = new HttpSourceReader(`${base}/feed`, 2000);
    await assert.rejects(reader.readIfChanged(), (error: unknown) => {
      assert.ok(error instanceof SourceReadError, 'error instanceof SourceReadError');
      assert.equal(error.message, 'HTTP 500');
      assert.equal(describeReadError(error), 'HTTP 500');
      return true;
    });
  });

  it('throws on HTTP 404 too', async () => {
    handler = (_req, res) => {
      res.writeHead(404);
      res.end();
    };
    await assert.rejects(new HttpSourceReader(`${base}/feed`, 2000).readIfChanged(), /HTTP 404/);
  });

  it('times out when the server never answers', async () => {
    handler = () => {
      /* never answer */
    };
    const started = Date.now();
    await assert.rejects(new HttpSourceReader(`${base}/hang`, 150).readIfChanged(), (error: unknown) => {
      assert.equal(describeReadError(error), 'request timed out after 0.15 s');
      return true;
    });
    // Ended by its own timeout, not left to hang.
    assert.ok(Date.now() - started < HANG_MS, 'Date.now() - started < HANG_MS');
  });

  it('refuses a response announced as larger than 16 MiB before reading it', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(17 * 1024 * 1024) });
      res.write('{');
    };
    await assert.rejects(new HttpSourceReader(`${base}/big`, 2000).readIfChanged(), /^Error: response larger than 16 MiB \(max_bytes\)$/);
  });

  it('throws a path-free error when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(new HttpSourceReader(`http://127.0.0.1:${port}/`, 1000).readIfChanged(), (error: unknown) => {
      assert.ok(!describeReadError(error).includes('/'), '!describeReadError(error).includes(\'/\')');
      return true;
    });
  });

  it('under a SourceMonitor: degraded while erroring with data kept, active again on 304', async () => {
    let mode: 'good' | 'fail' | 'unchanged' = 'good';
    handler = (_req, res) => {
      if (mode === 'good') return json('{"items":{"a":7}}', { etag: '"e1"' })(_req, res);
      if (mode === 'fail') {
        res.writeHead(503);
        res.end();
        return;
      }
      res.writeHead(304);
      res.end();
    };
    const monitor = new SourceMonitor([{ name: 'remote', type: 'http', url: `${base}/feed`, max_age_seconds: 300, poll_seconds: 0.05, timeout_seconds: 1 }]);
    try {
      await monitor.start();
      assert.equal(monitor.health(Date.now())[0]!.state, 'active');
      mode = 'fail';
      await eventually(() => monitor.health(Date.now())[0]!.state === 'degraded');
      assert.equal(monitor.health(Date.now())[0]!.error, 'HTTP 503');
      assert.equal(monitor.views()[0]!.items.get('a')?.raw, '7');
      assert.equal(monitor.views()[0]!.healthy, false);
      mode = 'unchanged';
      await eventually(() => monitor.health(Date.now())[0]!.state === 'active');
      assert.equal(monitor.views()[0]!.healthy, true);
      assert.equal(monitor.views()[0]!.items.get('a')?.raw, '7');
    } finally {
      monitor.stop();
    }
  });

  it('under a SourceMonitor: a source that recovers after a long outage is used again within max_backoff_seconds', async (t) => {
    // 0.05 s polls doubling for 10+ failures would wait over 50 s without the cap.
    // The first document is good: its parse starts the source's parse thread, which the recovery then finds
    // running (a thread's start, a second or two on a busy machine, is no part of the back-off).
    let failing = true;
    let polls = 0;
    const polledAt: number[] = [];
    handler = (_req, res) => {
      polls++;
      polledAt.push(Date.now());
      if (failing && polls > 1) {
        res.writeHead(503);
        res.end();
        return;
      }
      json(`{"updated_at":"${new Date().toISOString()}","items":{"a":42}}`)(_req, res);
    };
    const monitor = new SourceMonitor([{ name: 'remote', type: 'http', url: `${base}/feed`, max_age_seconds: 300, poll_seconds: 0.05, timeout_seconds: 1, max_backoff_seconds: 0.4 }]);
    try {
      await monitor.start();
      assert.equal(monitor.health(Date.now())[0]!.state, 'active');
      await eventually(() => polls >= 10, 10_000, 20);
      assert.equal(monitor.health(Date.now())[0]!.state, 'degraded');
      const sinceStart = polls;
      // Capped: a failing source is still probed (three more probes come, where the uncapped back-off would
      // wait over 50 s, past the deadline), and never faster than every 0.4 s (a timer may fire a millisecond early).
      await eventually(() => polls >= sinceStart + 3, 10_000, 10);
      const times = polledAt.slice(sinceStart - 1, sinceStart + 3);
      const gaps = times.slice(1).map((at, i) => at - times[i]!);
      t.diagnostic(`gaps between probes while failing: ${gaps.join(', ')} ms (cap 0.4 s)`);
      assert.ok(gaps.length === 3 && gaps.every((gap) => gap >= 395), `gaps ${gaps.join(', ')} ms with a 0.4 s cap`);
      failing = false;
      const recovered = Date.now();
      await eventually(() => monitor.health(Date.now())[0]!.state === 'active', 3000, 10);
      const ms = Date.now() - recovered;
      t.diagnostic(`active again ${ms} ms after the server recovered`);
      assert.ok(ms <= 1000, `active again only after ${ms} ms (cap 400 ms)`);
      assert.equal(monitor.views()[0]!.items.get('a')?.raw, '42');
      assert.equal(monitor.views()[0]!.healthy, true);
    } finally {
      monitor.stop();
    }
  });
});

describe('nextDelayMs', () => {
  it('is the poll interval while nothing fails', () => {
    assert.equal(nextDelayMs(10, 0), 10_000);
    assert.equal(nextDelayMs(0.5, 0), 500);
    assert.equal(nextDelayMs(10, -1), 10_000);
  });

  it('doubles per consecutive failure', () => {
    assert.equal(nextDelayMs(1, 1), 2_000);
    assert.equal(nextDelayMs(1, 2), 4_000);
    assert.equal(nextDelayMs(1, 4), 16_000);
    assert.equal(nextDelayMs(10, 1), 20_000);
  });

  it('is capped by default at the larger of the interval and 30 s, never at minutes', () => {
    assert.equal(nextDelayMs(10, 2), 30_000);
    assert.equal(nextDelayMs(10, 50), 30_000);
    assert.equal(nextDelayMs(1, 1000), 30_000);
    assert.equal(nextDelayMs(0.1, 16), 30_000);
    assert.equal(nextDelayMs(60, 5), 60_000);
  });

  it('is capped at a configured max_backoff_seconds', () => {
    assert.equal(nextDelayMs(10, 1, 15), 15_000);
    assert.equal(nextDelayMs(10, 9, 120), 120_000);
    assert.equal(nextDelayMs(0.05, 20, 0.2), 200);
  });

  it('never polls faster than the configured interval', () => {
    assert.equal(nextDelayMs(600, 0), 600_000);
    assert.equal(nextDelayMs(600, 3), 600_000);
    assert.equal(nextDelayMs(10, 3, 1), 10_000);
  });
});
