import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../support/harness.js';

describe('public pages', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  it('/ is a right-to-left page in Persian and English linking to the docs, status and account pages', async () => {
    const page = await harness.app.inject({ url: '/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(page.body, /<html lang="fa" dir="rtl">/);
    for (const href of ['/docs', '/status', '/account']) assert.ok(page.body.includes(`href="${href}"`), `links to ${href}`);
    assert.match(page.body, /مستندات/);
    assert.match(page.body, /API reference/);
  });

  it('/ is not an API operation', async () => {
    const document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, unknown> };
    assert.ok(!('/' in document.paths), 'the front page is kept out of the API document');
  });
});
