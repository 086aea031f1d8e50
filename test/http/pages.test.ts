import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../support/harness.js';

describe('public pages', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  it('/ is a right-to-left page in Persian and English linking to the docs, status, account and board pages', async () => {
    const page = await harness.app.inject({ url: '/' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(page.body, /<html lang="fa" dir="rtl">/);
    for (const href of ['/docs', '/status', '/account', '/board']) assert.ok(page.body.includes(`href="${href}"`), `links to ${href}`);
    assert.match(page.body, /مستندات/);
    assert.match(page.body, /API reference/);
  });

  it('/account is a page whose script and chart library come from this server only', async () => {
    const page = await harness.app.inject({ url: '/account' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<html lang="fa" dir="rtl">/);
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(sources.sort(), ['/account/account.js', '/account/uplot.css', '/account/uplot.js']);
    for (const path of sources) {
      const asset = await harness.app.inject({ url: path });
      assert.equal(asset.statusCode, 200, path);
      assert.ok(asset.body.length > 100, path);
    }
    const script = (await harness.app.inject({ url: '/account/account.js' })).body;
    assert.doesNotThrow(() => new Function(script), 'the page script parses');
    assert.doesNotMatch(script, /https?:\/\//, 'the page script calls no outside address');
    assert.match(script, /sessionStorage/);
    assert.doesNotMatch(script, /localStorage|document\.cookie/, 'the key is kept in the tab only');
    assert.match(script, /fetch\('\/v1\/usage\?days='/);
  });

  it('/account, with a real key, reads /v1/usage with the rate-limit headers it shows', async () => {
    const { key } = await harness.keyFor('page-user', 'basic');
    const usage = await harness.app.inject({ url: '/v1/usage?days=7', headers: { 'x-api-key': key } });
    assert.equal(usage.statusCode, 200);
    for (const name of ['ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) assert.ok(usage.headers[name] !== undefined, name);
    assert.match(String(usage.headers['ratelimit-policy']), /"(minute|day)";q=\d+/, 'the policy the page parses');
  });

  it('/board is a page whose only script comes from this server and subscribes to the stream with the key from the session', async () => {
    const page = await harness.app.inject({ url: '/board?api_key=nrk_from_the_address&keys=usd_free' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<html lang="fa" dir="rtl">/);
    assert.equal(page.headers['cache-control'], 'no-store', 'an address holding a key is never cached');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.ok(!page.body.includes('nrk_from_the_address'), 'the page never echoes the key');
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(sources, ['/board/board.js']);
    const script = (await harness.app.inject({ url: '/board/board.js' })).body;
    assert.doesNotThrow(() => new Function(script), 'the page script parses');
    assert.doesNotMatch(script, /https?:\/\//, 'the page script calls no outside address');
    assert.match(script, /new EventSource\('\/v1\/stream\?'/);
    assert.match(script, /sessionStorage/);
    assert.doesNotMatch(script, /localStorage|document\.cookie/, 'the key is kept in the tab only');
    assert.equal((await harness.app.inject({ url: '/board?other=1' })).statusCode, 400, 'an unknown parameter is refused like anywhere else');
  });

  it('/ is not an API operation', async () => {
    const document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, unknown> };
    for (const path of ['/', '/account', '/account/uplot.js', '/board', '/board/board.js']) assert.ok(!(path in document.paths), `${path} is kept out of the API document`);
  });
});
