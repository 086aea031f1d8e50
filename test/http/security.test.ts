import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ENDPOINTS } from '../../src/http/endpoints/registry.js';
import { dialects, startHarness, type Harness } from '../support/harness.js';

/**
 * The path each keyed route is called with by a given account: each
 * endpoint's folder gives its own (`examples` in its route.ts), listed by the
 * registry. The routes are compared with those the app registers, so a keyed
 * route without an example fails the suite.
 */
const PATHS: Record<string, (username: string) => string> = Object.assign({}, ...ENDPOINTS.map((endpoint) => endpoint.examples));

/**
 * Each route is called over real HTTP two ways: a plain GET (for detail, the
 * raw node:http path) and with the last segment's first character
 * percent-encoded, which only Fastify's routing takes.
 */
const VARIANTS: { name: string; path: (path: string) => string }[] = [
  { name: 'plain', path: (path) => path },
  {
    name: 'percent-encoded',
    path: (path) => {
      const cut = path.lastIndexOf('/') + 1;
      return path.slice(0, cut) + '%' + path.charCodeAt(cut).toString(16).toUpperCase() + path.slice(cut + 1);
    },
  },
];

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * One GET over real HTTP, from a loopback address of the caller's choosing:
 * each group of tests gets its own, so the failed-key throttle (per client
 * address) never spills from one group into the next.
 */
function get(base: string, path: string, key: string | undefined, localAddress: string): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: hostname, port, path, localAddress, headers: key ? { 'x-api-key': key } : {}, timeout: 5000 }, (response) => {
      let text = '';
      const answer = () => resolve({ status: response.statusCode!, headers: response.headers, text });
      // A stream never ends by itself: its first bytes are the answer.
      const streaming = String(response.headers['content-type']).startsWith('text/event-stream');
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (streaming) {
          answer();
          outgoing.destroy();
        }
      });
      response.on('end', answer);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer to ${path} within 5 s`)));
    outgoing.on('error', reject).end();
  });
}

function assertError(response: Answer, status: number, code: string) {
  assert.equal(response.status, status, response.text);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  assert.equal(response.headers['cache-control'], 'no-store');
  const body = JSON.parse(response.text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['success', 'status', 'generated_at', 'error', 'message', 'request_id']);
  assert.equal(body.success, false);
  assert.equal(body.status, 'error');
  assert.equal(body.error, code);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.request_id, response.headers['x-request-id']);
  assert.match(String(body.generated_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+03:30$/);
}

/** A refusal after the key was known is counted: it carries the key's limit headers. */
function assertCounted(response: Answer) {
  assert.ok(response.headers['x-ratelimit-limit'], `no rate-limit headers on ${response.status}`);
}

for (const dialect of dialects()) {
  describe(`security suite over HTTP (${dialect.name})`, dialect.options, () => {
    let harness: Harness;
    let base: string;
    let good: { key: string; id: string };
    let revoked: { key: string };
    let expired: { key: string };
    let suspended: { key: string };

    before(async () => {
      harness = await startHarness({ databaseUrl: dialect.databaseUrl });
      good = await harness.keyFor('good-user');
      revoked = await harness.keyFor('revoked-user');
      await harness.store.keys.revoke((await harness.store.keys.list((await harness.store.accounts.find('revoked-user'))!.id))[0]!.id);
      const expiring = await harness.store.accounts.create('expired-user', 'enterprise');
      const issued = await harness.store.keys.issue(expiring.id, { expiresAt: Date.now() + 300 });
      expired = { key: issued.key };
      suspended = await harness.keyFor('suspended-user', 'enterprise', { status: 'suspended' });
      await new Promise((r) => setTimeout(r, 350));
      await harness.runtime.directory!.poll();
      base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(() => harness.close());

    it('every keyed route has an entry in this suite', () => {
      const routes = harness.app.keyedRoutes.map((route) => route.url);
      assert.deepEqual([...routes].sort(), Object.keys(PATHS).sort(), 'keyed routes and the suite table differ');
    });

    let group = 0;
    for (const [route, pathFor] of Object.entries(PATHS)) {
      for (const variant of VARIANTS) {
        const url = (username: string) => variant.path(pathFor(username));
        const address = `127.0.0.${10 + group++}`;
        const call = (path: string, key?: string) => get(base, path, key, address);
        describe(`${route} (${variant.name})`, () => {
          it('works with a good key', async () => {
            const response = await call(url('good-user'), good.key);
            assert.equal(response.status, 200, response.text);
          });
          it('401 API_KEY_MISSING without a key', async () => {
            assertError(await call(url('good-user')), 401, 'API_KEY_MISSING');
          });
          it('401 API_KEY_INVALID for a malformed key', async () => {
            assertError(await call(url('good-user'), "nrk_short'; drop table accounts;--"), 401, 'API_KEY_INVALID');
          });
          it('401 API_KEY_INVALID for an unknown key', async () => {
            assertError(await call(url('good-user'), 'nrk_' + 'A'.repeat(32)), 401, 'API_KEY_INVALID');
          });
          it('401 API_KEY_INVALID for a revoked key', async () => {
            assertError(await call(url('revoked-user'), revoked.key), 401, 'API_KEY_INVALID');
          });
          it('401 API_KEY_INVALID for an expired key', async () => {
            assertError(await call(url('expired-user'), expired.key), 401, 'API_KEY_INVALID');
          });
          it('403 SERVICE_NOT_ACTIVE for a suspended account, counted', async () => {
            const response = await call(url('suspended-user'), suspended.key);
            assertError(response, 403, 'SERVICE_NOT_ACTIVE');
            assertCounted(response);
          });
          it('403 SERVICE_NOT_ACTIVE when the plan lacks the service, counted', async () => {
            const service = harness.app.keyedRoutes.find((r) => r.url === route)!.service;
            // Several routes share a service (detail, convert, jewellery): one account per route and variant.
            const username = `no-${service}-${address.replaceAll('.', '-')}`;
            const others = ['catalogue', 'detail', 'status', 'usage', 'webservice'].filter((s) => s !== service);
            const { key } = await harness.keyFor(username, 'enterprise', { overrides: { services: others as never } });
            const response = await call(url(username), key);
            assertError(response, 403, 'SERVICE_NOT_ACTIVE');
            assertCounted(response);
          });
          it('429 RATE_LIMIT_EXCEEDED past the limit, with Retry-After', async () => {
            const username = `one-a-minute-${address.replaceAll('.', '-')}`;
            const { key } = await harness.keyFor(username, 'enterprise', { overrides: { requests_per_minute: 1 } });
            assert.equal((await call(url(username), key)).status, 200);
            const refused = await call(url(username), key);
            assertError(refused, 429, 'RATE_LIMIT_EXCEEDED');
            assert.ok(Number(refused.headers['retry-after']) >= 1, 'Number(refused.headers[\'retry-after\']) >= 1');
          });
        });
      }
    }
  });
}
