import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { CatalogueRenderer } from '../../src/http/endpoints/catalogue/render.js';
import { DetailRenderer } from '../../src/http/endpoints/detail/render.js';
import { WebserviceRenderer } from '../../src/http/endpoints/webservice/render.js';
import { startHarness, type Harness } from '../support/harness.js';

/** What a bug would put in an exception: a path, a query, a secret. None of it may reach a client. */
const INTERNALS = 'renderer exploded at /srv/nerkh/var/nerkh.sqlite: SELECT key_hash FROM api_keys';

interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(base: string, path: string, key: string, method = 'GET'): Promise<Exchange> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, path, method, headers: { 'x-api-key': key }, timeout: 5000 }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer to ${path} within 5 s`)));
    outgoing.on('error', reject).end();
  });
}

describe('an unexpected exception is a 500 INTERNAL_ERROR that reveals nothing', () => {
  let harness: Harness;
  let base: string;
  let key: string;
  const logLines: Record<string, unknown>[] = [];
  const restore: (() => void)[] = [];

  /** Make every call of a renderer method throw until the test ends. */
  function breakMethod(prototype: object, name: string) {
    const target = prototype as Record<string, unknown>;
    const original = target[name];
    target[name] = () => {
      throw new Error(INTERNALS);
    };
    restore.push(() => (target[name] = original));
  }

  function assertRevealsNothing(answer: Exchange) {
    assert.equal(answer.status, 500, answer.body);
    assert.equal(answer.headers['cache-control'], 'no-store');
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['success', 'status', 'generated_at', 'error', 'message', 'request_id']);
    assert.equal(body.error, 'INTERNAL_ERROR');
    assert.equal(body.message, 'An internal error occurred; quote the request id when reporting it.');
    assert.equal(body.request_id, answer.headers['x-request-id']);
    for (const leak of ['exploded', '/srv', 'sqlite', 'SELECT', 'api_keys', 'Error', '.ts:', 'at ']) assert.ok(!answer.body.includes(leak), `the body reveals ${JSON.stringify(leak)}: ${answer.body}`);
  }

  /** The operator still learns what happened: one error line under the request id, with the exception. */
  function assertLogged(requestId: unknown) {
    const line = logLines.find((entry) => entry.reqId === requestId && entry.level === 50);
    assert.ok(line, `no error logged for request ${String(requestId)}`);
    assert.match(JSON.stringify(line.err), /renderer exploded/);
  }

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n')) if (text) logLines.push(JSON.parse(text) as Record<string, unknown>);
        done();
      },
    });
    harness = await startHarness({ runtime: { logger: pino({ level: 'info' }, sink) } });
    ({ key } = await harness.keyFor('unlucky-board'));
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterEach(() => {
    for (const undo of restore.splice(0)) undo();
  });
  after(() => harness.close());

  it('on the raw detail path (plain GET)', async () => {
    breakMethod(DetailRenderer.prototype, 'prepare');
    const answer = await send(base, '/v1/rates/usd_free', key);
    assertRevealsNothing(answer);
    assertLogged(answer.headers['x-request-id']);
  });

  it('on the Fastify detail route (percent-encoded GET, and HEAD)', async () => {
    breakMethod(DetailRenderer.prototype, 'prepare');
    const answer = await send(base, '/v1/rates/%75sd_free', key);
    assertRevealsNothing(answer);
    assertLogged(answer.headers['x-request-id']);
    const head = await send(base, '/v1/rates/usd_free', key, 'HEAD');
    assert.equal(head.status, 500);
    assert.equal(head.headers['cache-control'], 'no-store');
  });

  it('on the raw catalogue path', async () => {
    breakMethod(CatalogueRenderer.prototype, 'prepare');
    const answer = await send(base, '/v1/rates?category=coin', key);
    assertRevealsNothing(answer);
    assertLogged(answer.headers['x-request-id']);
  });

  it('on a route answered through Fastify’s error handler (webservice feed)', async () => {
    breakMethod(WebserviceRenderer.prototype, 'render');
    const answer = await send(base, '/webservice/unlucky-board', key);
    assertRevealsNothing(answer);
    assertLogged(answer.headers['x-request-id']);
  });

  it('the process keeps serving afterwards', async () => {
    assert.equal((await send(base, '/v1/rates/usd_free', key)).status, 200);
    assert.equal((await send(base, '/v1/rates', key)).status, 200);
    assert.equal((await send(base, '/webservice/unlucky-board', key)).status, 200);
  });
});
