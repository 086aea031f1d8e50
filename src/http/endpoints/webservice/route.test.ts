import assert from 'node:assert/strict';
import { it } from 'node:test';
import { json } from '../../../../test/support/harness.js';
import { routeSuite } from '../../../../test/support/route-suite.js';

routeSuite('GET /webservice/{username}', (s) => {
  it("serves the owner's allowance in the flat webservice shape", async () => {
    const { key: own } = await s.harness.keyFor('old-board', 'pro', { references: ['usd_free', 'coin_emami'] });
    const response = await s.harness.app.inject({ url: '/webservice/old-board', headers: { 'x-api-key': own } });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(body.success, true);
    assert.equal(typeof body.server_time, 'number');
    assert.deepEqual(Object.keys(body).filter((k) => typeof body[k] === 'object'), ['usd_free', 'coin_emami']);
    const usd = body.usd_free as Record<string, unknown>;
    assert.deepEqual(Object.keys(usd), ['title', 'value', 'unit', 'currency', 'per', 'updated_at', 'date_jalali', 'change', 'change_percent', 'status', 'stale_seconds', 'market']);
    assert.equal(usd.status, 'ok');
    assert.equal(usd.stale_seconds, null);
    assert.match(String(usd.date_jalali), /^14\d\d\/\d\d\/\d\d$/);
  });
  it("403s for another account's username and for one that does not exist, alike", async () => {
    const { key: own } = await s.harness.keyFor('board-two', 'pro');
    const other = await s.harness.app.inject({ url: '/webservice/acme', headers: { 'x-api-key': own } });
    const missing = await s.harness.app.inject({ url: '/webservice/no-such-user', headers: { 'x-api-key': own } });
    assert.equal(other.statusCode, 403);
    assert.equal(missing.statusCode, 403);
    assert.equal(json(other).message, json(missing).message);
    assert.equal(json(other).error, json(missing).error);
  });
});
