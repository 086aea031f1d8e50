import assert from 'node:assert/strict';
import { it } from 'node:test';
import { json } from '../../../../test/support/harness.js';
import { assertMatches, routeSuite } from '../../../../test/support/route-suite.js';
import { StatusResponse } from './schema.js';

routeSuite('GET /v1/status and /status', (s) => {
  it('reports service, endpoints and sources', async () => {
    const body = json(await s.get('/v1/status'));
    assertMatches(StatusResponse, body);
    assert.deepEqual((body.sources as { name: string }[]).map((s) => s.name), ['alpha', 'beta']);
  });
  it('shows a public HTML page without a key', async () => {
    const page = await s.harness.app.inject({ url: '/status' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /http-equiv="refresh"/);
    assert.match(page.body, /alpha/);
    assert.match(page.body, /وضعیت سرویس/);
  });
});
