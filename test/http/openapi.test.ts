import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startHarness, type Harness } from '../support/harness.js';
import { tempDir } from '../support/env.js';

const REDOCLY = fileURLToPath(new URL('../../node_modules/@redocly/cli/bin/cli.js', import.meta.url));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function lint(file: string, config: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [REDOCLY, 'lint', '--config', config, '--format', 'stylish', file], { timeout: 120_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

describe('OpenAPI document', () => {
  let harness: Harness;
  let document: Json;
  const dir = tempDir('nerkh-openapi-');
  before(async () => {
    harness = await startHarness();
    document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body) as Json;
  });
  after(async () => {
    await harness.close();
    dir.cleanup();
  });

  it("passes Redocly's recommended rules with no error", async () => {
    const file = join(dir.path, 'openapi.json');
    const config = join(dir.path, 'redocly.yaml');
    writeFileSync(file, JSON.stringify(document));
    writeFileSync(config, 'extends:\n  - recommended\n');
    const { code, output } = await lint(file, config);
    assert.doesNotMatch(output, /\berror\b/, output);
    assert.equal(code, 0, output);
  });

  it('declares servers, and an operationId and security on every operation, with HEAD beside each GET', () => {
    assert.ok(Array.isArray(document.servers) && document.servers.length > 0, 'Array.isArray(document.servers) && document.servers.length > 0');
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(document.paths as Json)) {
      assert.ok(item.head, `HEAD ${path} documented`);
      for (const [method, operation] of Object.entries(item as Json)) {
        assert.ok(operation.operationId, `${method} ${path} has an operationId`);
        assert.ok(!ids.has(operation.operationId), `operationId ${operation.operationId} is unique`);
        ids.add(operation.operationId);
        assert.ok(Array.isArray(operation.security), `${method} ${path} declares security`);
        assert.equal(operation.security.length > 0, path.startsWith('/v1/') || path.startsWith('/webservice/') || path.startsWith('/compat/'), `${method} ${path}: a key only where one is needed`);
        assert.ok(operation.responses['405'], `${method} ${path} documents 405`);
        assert.ok(operation.responses['200'].headers['X-Request-Id'], `${method} ${path} documents x-request-id`);
      }
    }
  });

  it('documents the rate-limit, ETag and Retry-After headers as shared components', () => {
    const headers = document.components.headers as Json;
    for (const name of ['ETag', 'Cache-Control', 'RateLimit', 'RateLimit-Policy', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'X-Request-Id']) assert.ok(headers[name], name);
    const detail = document.paths['/v1/rates/{keys}'].get.responses as Json;
    assert.deepEqual(detail['200'].headers.ETag, { $ref: '#/components/headers/ETag' });
    assert.deepEqual(detail['200'].headers.RateLimit, { $ref: '#/components/headers/RateLimit' });
    assert.deepEqual(detail['304'].headers.ETag, { $ref: '#/components/headers/ETag' });
    assert.deepEqual(detail['429'].headers['Retry-After'], { $ref: '#/components/headers/Retry-After' });
  });

  it('refers to shared response schemas, keeps no unused one, and gives /metrics as text/plain', () => {
    const text = JSON.stringify(document.paths);
    assert.deepEqual(document.paths['/v1/rates/{keys}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/DetailResponse' });
    const all = JSON.stringify(document);
    for (const name of Object.keys(document.components.schemas as Json)) assert.ok(all.includes(`"#/components/schemas/${name}"`), `schema ${name} is used`);
    assert.ok(text.includes('"text/plain; version=0.0.4"'), 'text.includes(\'"text/plain; version=0.0.4"\')');
    assert.ok(!('/' in document.paths) && !('/status' in document.paths) && !('/docs' in document.paths), '!(\'/\' in document.paths) && !(\'/status\' in document.paths) && !(\'/docs\' in document.paths)');
  });

  it('/metrics still answers Prometheus text', async () => {
    const response = await harness.app.inject({ url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain/);
    assert.match(response.body, /^# HELP /m);
  });
});

describe('/docs', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  it('is branded Nerkh, without the framework logo', async () => {
    const page = await harness.app.inject({ url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>Nerkh API reference/);
    assert.doesNotMatch(page.body, /<title>Swagger UI/);
    const initializer = await harness.app.inject({ url: '/docs/static/swagger-initializer.js' });
    assert.equal(initializer.statusCode, 200);
    const logo = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(initializer.body);
    assert.ok(logo, 'a logo replaces the framework one');
    assert.match(Buffer.from(logo[1]!, 'base64').toString('utf8'), /Nerkh/);
  });

  it('serves the document compressed when asked (gzip and br), with the same content', async () => {
    const plain = await harness.app.inject({ url: '/openapi.json' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /Accept-Encoding/);
    for (const [encoding, decode] of [['gzip', gunzipSync], ['br', brotliDecompressSync]] as const) {
      const packed = await harness.app.inject({ url: '/openapi.json', headers: { 'accept-encoding': encoding } });
      assert.equal(packed.headers['content-encoding'], encoding);
      assert.ok(packed.rawPayload.length < plain.rawPayload.length / 4, `${encoding}: ${packed.rawPayload.length} of ${plain.rawPayload.length} bytes`);
      assert.equal(decode(packed.rawPayload).toString(), plain.body);
    }
  });

  it('describes every error code and the response headers, from the code that defines them', async () => {
    const { ERROR_STATUS } = await import('../../src/domain/errors.js');
    const document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body) as Json;
    const description = String(document.info.description);
    for (const [code, status] of Object.entries(ERROR_STATUS)) assert.ok(description.includes(`| \`${code}\` | ${status} |`), `${code} in the error table`);
    for (const name of ['ETag', 'RateLimit', 'Retry-After', 'X-Request-Id']) assert.ok(description.includes(`| \`${name}\` |`), `${name} in the header table`);
  });
});
