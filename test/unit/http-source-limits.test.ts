/**
 * An http source does not trust its upstream: the decoded body
 * is capped at max_bytes however it is sent (gzip bomb, chunked without end),
 * redirects are refused unless allowed, plain http:// only to loopback unless
 * allowed, and every failure names its cause. Real servers on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { addressRefusal } from '../../src/sources/address-rule.js';
import { describeFetchFailure } from '../../src/sources/fetch-failure.js';
import { HttpSourceReader, type HttpSourceLimits } from '../../src/sources/http.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { eventually, readFailure, tempDir } from '../support/env.js';
import { sendEndlessJson, sendGzipFile, writeGzipBomb } from '../support/hostile-upstream.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const MiB = 1024 * 1024;
const GOOD = () => `{"updated_at":"${new Date(Date.now() - 1000).toISOString()}","items":{"a":300.50}}`;

describe('http source limits', () => {
  const dir = tempDir('nerkh-http-limits-');
  let server: Server;
  let base: string;
  let handler: Handler = (_req, res) => res.end();
  let bomb = '';
  let bombBytes = 0;

  before(async () => {
    bomb = join(dir.path, 'bomb.json.gz');
    bombBytes = await writeGzipBomb(bomb, 1024 * MiB);
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    dir.cleanup();
  });

  const reader = (path: string, limits: HttpSourceLimits = {}, timeoutMs = 10_000) => new HttpSourceReader(`${base}${path}`, timeoutMs, limits);

  describe('decoded body at most max_bytes', () => {
    it(`refuses a gzip bomb (a few MB inflating to 1 GiB) once 16 MiB are inflated, whatever its Content-Length says`, async (t) => {
      handler = (_req, res) => sendGzipFile(res, bomb);
      const rssBefore = process.memoryUsage().rss;
      const started = Date.now();
      assert.equal(await readFailure(reader('/bomb')), 'response larger than 16 MiB (max_bytes)');
      const grew = (process.memoryUsage().rss - rssBefore) / MiB;
      t.diagnostic(`${(bombBytes / MiB).toFixed(1)} MiB of gzip refused in ${Date.now() - started} ms; RSS grew ${grew.toFixed(0)} MiB`);
      assert.ok(grew < 100, `RSS grew ${grew.toFixed(0)} MiB reading a bomb`);
    });

    it('cuts off a chunked body without Content-Length past the cap, and the sender with it', async (t) => {
      let sent: Promise<number> = Promise.resolve(0);
      handler = (_req, res) => (sent = sendEndlessJson(res, 300 * MiB));
      assert.equal(await readFailure(reader('/endless', { maxBytes: 4 * MiB })), 'response larger than 4 MiB (max_bytes)');
      const bytes = await sent;
      t.diagnostic(`the server wrote ${(bytes / MiB).toFixed(1)} MiB of 300 MiB before the reader hung up`);
      assert.ok(bytes < 40 * MiB, `the server wrote ${(bytes / MiB).toFixed(0)} MiB of 300 before it was cut off`);
    });

    it('reads a document exactly at the cap, and refuses one a byte over it', async () => {
      const body = GOOD();
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      };
      assert.equal((await reader('/exact', { maxBytes: Buffer.byteLength(body) }).readIfChanged())?.items.get('a')?.raw, '300.50');
      assert.equal(await readFailure(reader('/exact', { maxBytes: Buffer.byteLength(body) - 1 })), `response larger than ${Buffer.byteLength(body) - 1} bytes (max_bytes)`);
    });
  });

  describe('redirects', () => {
    const redirect =
      (status: number, location: string): Handler =>
      (_req, res) => {
        res.writeHead(status, { location });
        res.end('moved');
      };

    it('refuses one by default, with the reason', async () => {
      handler = (req, res) => (req.url === '/feed' ? res.end(GOOD()) : redirect(302, '/feed')(req, res));
      assert.equal(await readFailure(reader('/moved')), 'redirect refused (HTTP 302, "follow_redirects" is off)');
    });

    it('follows it with follow_redirects, up to 5 hops', async () => {
      handler = (req, res) => {
        const hop = Number(req.url!.slice(1));
        if (hop >= 5) return res.end(GOOD());
        redirect(hop % 2 ? 301 : 307, `${base}/${hop + 1}`)(req, res);
      };
      assert.equal((await reader('/0', { followRedirects: true }).readIfChanged())?.items.get('a')?.raw, '300.50');
      assert.equal(await readFailure(reader('/-1', { followRedirects: true })), 'too many redirects (more than 5)');
    });

    it('holds every hop to the address rule: no redirect to plain http:// off loopback, nor to another scheme', async () => {
      handler = redirect(302, 'http://192.0.2.10/feed');
      assert.equal(await readFailure(reader('/away', { followRedirects: true })), 'redirect refused: plain http:// is allowed only to a loopback host (use https:// or set "allow_insecure": true)');
      handler = redirect(302, 'file:///etc/passwd');
      assert.match(await readFailure(reader('/file', { followRedirects: true })), /^redirect refused: only https:\/\/ addresses are allowed/);
    });
  });

  describe('the address rule at fetch time', () => {
    it('refuses plain http:// to a host that is not loopback before any request is made', async () => {
      const started = Date.now();
      assert.match(await readFailure(new HttpSourceReader('http://192.0.2.10/feed', 10_000)), /^plain http:\/\/ is allowed only to a loopback host/);
      assert.ok(Date.now() - started < 500, 'no connection was attempted');
    });

    it('lets plain http:// through to loopback, or anywhere with allow_insecure', () => {
      assert.equal(addressRefusal('http://127.0.0.1:8080/feed', false), null);
      assert.equal(addressRefusal('http://[::1]/feed', false), null);
      assert.equal(addressRefusal('http://localhost/feed', false), null);
      assert.equal(addressRefusal('http://192.0.2.10/feed', true), null);
      assert.equal(addressRefusal('https://rates.example.test/feed', false), null);
      assert.match(addressRefusal('http://127.0.0.1.example.test/feed', false) ?? '', /loopback/);
    });
  });

  describe('the cause of a failed request', () => {
    it('connection refused', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      assert.equal(await readFailure(new HttpSourceReader(`http://127.0.0.1:${port}/`, 2000)), 'connection refused');
    });

    it('timed out, the body included', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"items":');
      };
      assert.equal(await readFailure(reader('/slow', {}, 300)), 'request timed out after 0.3 s');
    });

    it('HTTP status', async () => {
      handler = (_req, res) => {
        res.writeHead(500);
        res.end('boom');
      };
      assert.equal(await readFailure(reader('/fail')), 'HTTP 500');
    });

    it('connection closed mid-body', async () => {
      handler = (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"items":{"a":1', () => res.destroy());
      };
      assert.match(await readFailure(reader('/cut')), /^connection (closed|reset) by the server$/);
    });

    it('TLS: a self-signed certificate', async () => {
      const key = join(dir.path, 'key.pem');
      const cert = join(dir.path, 'cert.pem');
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      const tls = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => res.end(GOOD()));
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
      try {
        assert.equal(await readFailure(new HttpSourceReader(`https://127.0.0.1:${(tls.address() as AddressInfo).port}/`, 2000)), 'TLS: self-signed certificate');
      } finally {
        tls.closeAllConnections();
        await new Promise<void>((resolve) => tls.close(() => resolve()));
      }
    });

    it('DNS and the rest, from the error codes alone (never a message, which would name the host)', () => {
      const failed = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(`getaddrinfo ${code} rates.example.test`), { code }) });
      assert.equal(describeFetchFailure(failed('ENOTFOUND')), 'DNS lookup failed: host not found');
      assert.equal(describeFetchFailure(failed('EAI_AGAIN')), 'DNS lookup failed: temporary failure');
      assert.equal(describeFetchFailure(failed('UND_ERR_CONNECT_TIMEOUT')), 'connection timed out');
      assert.equal(describeFetchFailure(failed('ERR_SSL_WRONG_VERSION_NUMBER')), 'TLS handshake failed (ERR_SSL_WRONG_VERSION_NUMBER)');
      assert.equal(describeFetchFailure(failed('ESOMETHING')), 'request failed (ESOMETHING)');
      assert.equal(describeFetchFailure(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])), 'connection refused');
      assert.equal(describeFetchFailure(new TypeError('fetch failed')), 'request failed');
    });
  });

  it('under a SourceMonitor: past the cap the source is degraded with the reason, its last good data kept, and active again when the upstream behaves', async () => {
    let mode: 'good' | 'bomb' | 'redirect' = 'good';
    handler = (req, res) => {
      if (mode === 'good') return res.end(GOOD());
      if (mode === 'bomb') return sendGzipFile(res, bomb);
      res.writeHead(301, { location: '/elsewhere' });
      res.end();
    };
    const monitor = new SourceMonitor([{ name: 'remote', type: 'http', url: `${base}/feed`, max_age_seconds: 300, poll_seconds: 0.05, timeout_seconds: 5, max_backoff_seconds: 0.2, max_bytes: MiB }]);
    const health = () => monitor.health(Date.now())[0]!;
    try {
      await monitor.start();
      assert.equal(health().state, 'active');
      mode = 'bomb';
      await eventually(() => health().error === 'response larger than 1 MiB (max_bytes)');
      assert.equal(health().state, 'degraded');
      assert.equal(monitor.views()[0]!.items.get('a')?.raw, '300.50');
      mode = 'redirect';
      await eventually(() => health().error === 'redirect refused (HTTP 301, "follow_redirects" is off)');
      mode = 'good';
      await eventually(() => health().state === 'active');
      assert.equal(health().error, null);
    } finally {
      monitor.stop();
    }
  });
});
