import assert from 'node:assert/strict';
import { it } from 'node:test';
import { json } from '../../../../test/support/harness.js';
import { assertMatches, routeSuite } from '../../../../test/support/route-suite.js';
import { UsageResponse } from './schema.js';

routeSuite('GET /v1/usage', (s) => {
  it('counts every request of the account, ok and failed, per day and service', async () => {
    const { key: own } = await s.harness.keyFor('metered', 'basic');
    for (let i = 0; i < 3; i++) await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': own } });
    await s.harness.app.inject({ url: '/v1/rates/nothing_at_all', headers: { 'x-api-key': own } });
    await s.harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': own } });
    const response = await s.harness.app.inject({ url: '/v1/usage?days=7', headers: { 'x-api-key': own } });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assertMatches(UsageResponse, body);
    const daily = body.daily as { requests: number; errors: number }[];
    assert.equal(daily.length, 7);
    assert.deepEqual(daily.at(-1), { ...daily.at(-1), requests: 5, errors: 1 });
    assert.deepEqual(body.services, [
      { service: 'detail', requests: 4, share: 0.8 },
      { service: 'catalogue', requests: 1, share: 0.2 },
    ]);
    const errors = body.errors as { error: string; http_status: number; service: string; count: number }[];
    assert.deepEqual(errors.map((e) => [e.error, e.http_status, e.service, e.count]), [['RATE_NOT_FOUND', 404, 'detail', 1]]);
  });
  it('serves reports asked within a second from one read of the store, and reads again after it', async () => {
    const { key: own } = await s.harness.keyFor('reporting', 'basic');
    const ask = (days: number) => s.harness.app.inject({ url: `/v1/usage?days=${days}`, headers: { 'x-api-key': own } });
    const concurrent = await Promise.all([ask(7), ask(7), ask(1), ask(90)]);
    for (const response of concurrent) assert.equal(response.statusCode, 200, response.body);
    const stamps = new Set(concurrent.map((response) => json(response).generated_at));
    assert.equal(stamps.size, 1, 'one read served all four');
    assert.deepEqual(concurrent.map((response) => (json(response).daily as unknown[]).length), [7, 7, 1, 90]);
    await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': own } });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const later = json(await ask(7));
    assert.notEqual(later.generated_at, [...stamps][0]);
    const services = Object.fromEntries((later.services as { service: string; requests: number }[]).map((s) => [s.service, s.requests]));
    assert.deepEqual(services, { usage: 4, detail: 1 });
  });
  it('validates days', async () => {
    for (const days of ['0', '91', 'abc']) {
      const response = await s.get(`/v1/usage?days=${days}`);
      assert.equal(response.statusCode, 400, days);
      assert.equal(json(response).error, 'INVALID_PARAMETER');
    }
  });
});
