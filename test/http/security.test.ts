import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, json, startHarness, type Harness } from '../support/harness.js';

/** Every keyed route, with the path a given account would call. */
const ROUTES: { service: string; path: (username: string) => string }[] = [
  { service: 'catalogue', path: () => '/v1/rates' },
  { service: 'detail', path: () => '/v1/rates/usd_free,coin_emami' },
  { service: 'status', path: () => '/v1/status' },
  { service: 'usage', path: () => '/v1/usage' },
  { service: 'webservice', path: (username) => `/webservice/${username}` },
  { service: 'history', path: () => '/v1/rates/usd_free/history?interval=1h' },
  { service: 'history', path: () => `/v1/rates/usd_free,coin_emami?at=${new Date(Date.now() - 86_400_000).toISOString()}` },
];

function assertError(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  assert.equal(response.headers['cache-control'], 'no-store');
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(body.status, 'error');
  assert.equal(body.error, code);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.request_id, response.headers['x-request-id']);
  assert.match(String(body.generated_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+03:30$/);
}

for (const dialect of DIALECTS) {
  describe(`security suite (${dialect.name})`, () => {
    let harness: Harness;
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
      await harness.runtime.directory.poll();
    });
    after(() => harness.close());

    ROUTES.forEach((route, index) => {
      // Each route's failing keys come from an address of its own, under the failed-key throttle's 30 a minute.
      const remoteAddress = `127.0.0.${index + 10}`;
      describe(`${route.service}: ${route.path('user').split('?')[0]}${route.path('user').includes('?') ? '?…' : ''}`, () => {
        it('works with a good key', async () => {
          const response = await harness.app.inject({ remoteAddress, url: route.path('good-user'), headers: { 'x-api-key': good.key } });
          assert.equal(response.statusCode, 200, response.body);
        });
        it('401 API_KEY_MISSING without a key', async () => {
          assertError(await harness.app.inject({ remoteAddress, url: route.path('good-user') }), 401, 'API_KEY_MISSING');
        });
        it('401 API_KEY_INVALID for a malformed key', async () => {
          assertError(await harness.app.inject({ remoteAddress, url: route.path('good-user'), headers: { 'x-api-key': "nrk_short'; drop table accounts;--" } }), 401, 'API_KEY_INVALID');
        });
        it('401 API_KEY_INVALID for an unknown key', async () => {
          assertError(await harness.app.inject({ remoteAddress, url: route.path('good-user'), headers: { 'x-api-key': 'nrk_' + 'A'.repeat(32) } }), 401, 'API_KEY_INVALID');
        });
        it('401 API_KEY_INVALID for a revoked key', async () => {
          assertError(await harness.app.inject({ remoteAddress, url: route.path('revoked-user'), headers: { 'x-api-key': revoked.key } }), 401, 'API_KEY_INVALID');
        });
        it('401 API_KEY_INVALID for an expired key', async () => {
          assertError(await harness.app.inject({ remoteAddress, url: route.path('expired-user'), headers: { 'x-api-key': expired.key } }), 401, 'API_KEY_INVALID');
        });
        it('403 SERVICE_NOT_ACTIVE for a suspended account', async () => {
          assertError(await harness.app.inject({ remoteAddress, url: route.path('suspended-user'), headers: { 'x-api-key': suspended.key } }), 403, 'SERVICE_NOT_ACTIVE');
        });
        it('403 SERVICE_NOT_ACTIVE when the plan lacks the service', async () => {
          const username = `no-${route.service}-${index}`;
          const others = ['catalogue', 'detail', 'status', 'usage', 'webservice'].filter((s) => s !== route.service);
          const { key } = await harness.keyFor(username, 'enterprise', { overrides: { services: others as never } });
          assertError(await harness.app.inject({ remoteAddress, url: route.path(username), headers: { 'x-api-key': key } }), 403, 'SERVICE_NOT_ACTIVE');
        });
      });
    });
  });
}
