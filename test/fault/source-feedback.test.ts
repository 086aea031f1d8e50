/**
 * What a feed operator is told, by the real `nerkh serve` process: a file
 * source whose document carries item keys that match no reference (a typo
 * such as `usd_fre`) shows them on /v1/status, counts and names them on the
 * public page, and warns about them in the log once per distinct set; each way an
 * HTTP source can fail (a closed port, an upstream that never answers, a host
 * that does not resolve, a self-signed certificate, a 503) shows its own
 * reason; and a config naming an unknown source type stops the start with
 * the choices.
 *
 * Needs `npm run build` first (bin/nerkh.js imports dist/); `npm test` does it.
 * Run alone: node --import tsx --test test/fault/source-feedback.test.ts
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, writeRaw } from '../support/env.js';
import { assertBuilt, cleanEnv, cliOk, freePort, get, pollUntil, readCatalogue, ROOT, runCli, startServer, type ServerProcess } from '../e2e/helpers.js';

interface SourceStatus {
  name: string;
  state: string;
  last_update: string | null;
  error: string | null;
  unknown_keys: { count: number; sample: string[] };
}

const listen = (server: Server | TcpServer) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const close = (server: Server | TcpServer | null) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

describe('feed feedback: unknown item keys and the cause of each HTTP failure, from a real nerkh serve', () => {
  const dir = tempDir('nerkh-feed-feedback-');
  const levels = JSON.parse(readFileSync(join(ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
  const usdKey = readCatalogue().references.get('usd_free')!.source_key;
  const deskPath = join(dir.path, 'desk.json');
  /** The desk document: one real key, and the unknown ones given. */
  const desk = (value: number, unknown: string[], at = new Date()) => `{"updated_at":"${at.toISOString()}","items":{"${usdKey}":${value}${unknown.map((key, i) => `,"${key}":${1000 + i}`).join('')}}}`;
  const level = Math.round(levels[usdKey]!);

  let server: ServerProcess | null = null;
  let apiKey = '';
  let silent: TcpServer | null = null;
  const held: Socket[] = [];
  let unavailable: Server | null = null;
  let tls: Server | null = null;

  before(async () => {
    assertBuilt();
    // Stamped a minute ago: a rewrite (stamped now) moves updated_at, which /v1/status shows to the second, at once.
    writeRaw(deskPath, desk(level, ['usd_fre', 'ir_fx_fre_eur'], new Date(Date.now() - 60_000)));

    // A port nothing listens on: taken, then given back.
    const refusedPort = await freePort();
    // Accepts the connection and never answers.
    silent = createTcpServer((socket) => held.push(socket));
    const silentPort = await listen(silent);
    unavailable = createHttpServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down for maintenance at internal-host-7');
    });
    const unavailablePort = await listen(unavailable);
    // A certificate made now, trusted by nobody.
    const key = join(dir.path, 'key.pem');
    const cert = join(dir.path, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    tls = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => res.end(desk(level, [])));
    const tlsPort = await listen(tls);

    const http = (name: string, url: string, extra: Record<string, unknown> = {}) => ({ name, type: 'http', url, poll_seconds: 1, max_backoff_seconds: 2, timeout_seconds: 2, ...extra });
    const configPath = join(dir.path, 'nerkh.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        sources: [
          { name: 'desk', type: 'file', path: deskPath, max_age_seconds: 600, poll_seconds: 0.5 },
          http('refused', `http://127.0.0.1:${refusedPort}/feed`),
          http('silent', `http://127.0.0.1:${silentPort}/feed`, { timeout_seconds: 0.5 }),
          http('nowhere', 'https://nerkh-missing.invalid/feed'),
          http('selfsigned', `https://127.0.0.1:${tlsPort}/feed`),
          http('unavailable', `http://127.0.0.1:${unavailablePort}/feed`),
        ],
      }),
    );
    const env = { NERKH_HOST: '127.0.0.1', NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_CONFIG: configPath, NERKH_LOG_LEVEL: 'info' };
    server = await startServer(env);
    await cliOk(cleanEnv(env), ['accounts', 'add', 'feed-user', '--plan', 'enterprise']);
    apiKey = (JSON.parse((await cliOk(cleanEnv(env), ['keys', 'issue', 'feed-user', '--json'])).stdout) as { key: string }).key;
  });

  after(async () => {
    if (server) {
      await server.kill();
      if (server.stderr.trim()) console.error(`nerkh serve (feedback) stderr:\n${server.stderr.slice(-3000)}`);
    }
    for (const socket of held) socket.destroy();
    tls?.closeAllConnections();
    await Promise.all([close(silent), close(unavailable), close(tls)]);
    dir.cleanup();
  });

  const sources = async () => {
    const response = await get(server!.base, '/v1/status', apiKey);
    assert.equal(response.status, 200, response.text.slice(0, 300));
    return new Map((response.json as { sources: SourceStatus[] }).sources.map((s) => [s.name, s]));
  };
  /** The log's warnings about the desk's unknown keys (JSON lines on stdout). */
  const unknownKeyWarnings = () =>
    server!.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; source?: string })
      .filter((line) => line.source === 'desk' && / no reference/.test(line.msg));

  it('1. /v1/status names the unknown keys of the file source, which stays active with its known value', async () => {
    const { value } = await pollUntil(sources, (all) => all.get('desk')?.state === 'active', 10_000);
    const deskStatus = value.get('desk')!;
    assert.deepEqual(deskStatus.unknown_keys, { count: 2, sample: ['usd_fre', 'ir_fx_fre_eur'] });
    assert.equal(deskStatus.error, null);
    const rate = await get(server!.base, '/v1/rates/usd_free', apiKey);
    assert.equal((rate.json as { rates: { source: string; status: string }[] }).rates[0]!.source, 'desk');
  });

  it('2. each HTTP failure names its own cause on /v1/status, with no unknown keys (no document was read)', async () => {
    const expected: Record<string, RegExp> = {
      refused: /^connection refused$/,
      silent: /^request timed out after 0\.5 s$/,
      // ENOTFOUND where a resolver answers; a sandbox without one says EAI_AGAIN, "temporary failure".
      nowhere: /^DNS lookup failed: (host not found|temporary failure)$/,
      selfsigned: /^TLS: self-signed certificate$/,
      unavailable: /^HTTP 503$/,
    };
    const seen = (all: Map<string, SourceStatus>) => Object.entries(expected).every(([name, reason]) => all.get(name)?.state === 'down' && reason.test(all.get(name)?.error ?? ''));
    const { value } = await pollUntil(sources, seen, 30_000, 250, (all) => JSON.stringify([...all.values()].map((s) => [s.name, s.state, s.error])));
    for (const name of Object.keys(expected)) assert.deepEqual(value.get(name)!.unknown_keys, { count: 0, sample: [] });
    assert.ok(!JSON.stringify([...value.values()]).includes('internal-host-7'), "the upstream's own text is never shown");
  });

  it('3. the public page shows each cause, and the count and names of unknown keys, but nothing of the upstreams', async () => {
    const page = await get(server!.base, '/status');
    assert.equal(page.status, 200);
    for (const kind of ['connection refused', 'request timed out', 'DNS lookup failed', 'TLS error', 'source answered HTTP 503', '2 item keys match no reference: <code dir="ltr">usd_fre</code>, <code dir="ltr">ir_fx_fre_eur</code>', '۲ کلید بدون مرجع']) {
      assert.ok(page.text.includes(kind), `the status page lacks "${kind}"`);
    }
    for (const hidden of ['nerkh-missing.invalid', '127.0.0.1', 'internal-host-7']) assert.ok(!page.text.includes(hidden), `the status page shows "${hidden}"`);
  });

  it('4. the start log warns about the unknown keys once; a rewrite with the same keys says nothing, a new set warns again', async () => {
    assert.deepEqual(
      unknownKeyWarnings().map((line) => [line.level, line.msg]),
      [[40, 'source desk: 2 item keys match no reference: usd_fre, ir_fx_fre_eur']],
    );
    const before = (await sources()).get('desk')!.last_update;
    // The first document was stamped a minute ago: this one's updated_at (to the second on /v1/status) moves.
    writeRaw(deskPath, desk(level + 7, ['usd_fre', 'ir_fx_fre_eur']));
    await pollUntil(sources, (all) => all.get('desk')!.last_update !== before, 10_000);
    assert.equal(unknownKeyWarnings().length, 1, 'the same set again is not warned about');

    writeRaw(deskPath, desk(level + 9, ['usd_fre']));
    await pollUntil(sources, (all) => all.get('desk')!.unknown_keys.count === 1, 10_000);
    assert.deepEqual(
      unknownKeyWarnings().map((line) => line.msg),
      ['source desk: 2 item keys match no reference: usd_fre, ir_fx_fre_eur', 'source desk: 1 item key matches no reference: usd_fre'],
    );
    assert.ok(server!.running, server!.output());
  });
});

describe('an unknown source type in the config', () => {
  const dir = tempDir('nerkh-feed-type-');
  after(() => dir.cleanup());

  it('stops `nerkh serve` with the field and the choices', async () => {
    assertBuilt();
    const configPath = join(dir.path, 'nerkh.config.json');
    const file = (name: string) => ({ name, type: 'file', path: `${name}.json` });
    writeFileSync(configPath, JSON.stringify({ sources: [file('a'), file('b'), { name: 'c', type: 'htp', url: 'https://rates.example.test/feed' }] }));
    const result = await runCli(cleanEnv({ NERKH_CONFIG: configPath, NERKH_DATA_DIR: join(dir.path, 'data'), NERKH_PORT: String(await freePort()) }), ['serve']);
    assert.equal(result.code, 2, `${result.stdout}\n${result.stderr}`);
    assert.equal(result.stderr.trim(), `nerkh: config ${configPath}: sources[2].type: "htp" is not one of: file, http, manual`);
  });
});
