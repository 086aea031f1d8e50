import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
    assert.deepEqual(sources.sort(), ['/account/account.css', '/account/account.js', '/account/uplot.css', '/account/uplot.js']);
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

  it('/board is a page whose only script comes from this server and subscribes to the stream with the key it keeps for the site', async () => {
    const page = await harness.app.inject({ url: '/board?api_key=nrk_from_the_address&keys=usd_free' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<html lang="fa" dir="rtl">/);
    assert.equal(page.headers['cache-control'], 'no-store', 'an address holding a key is never cached');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.ok(!page.body.includes('nrk_from_the_address'), 'the page never echoes the key');
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(sources, ['/board/board.css', '/board/board.js']);
    const script = (await harness.app.inject({ url: '/board/board.js' })).body;
    assert.doesNotThrow(() => new Function(script), 'the page script parses');
    assert.doesNotMatch(script, /https?:\/\//, 'the page script calls no outside address');
    assert.match(script, /new EventSource\('\/v1\/stream\?'/);
    assert.match(script, /localStorage/);
    assert.doesNotMatch(script, /sessionStorage|document\.cookie/, 'the key is kept in localStorage only');
    // Served whatever the address holds (a refusal would leave a key in it): the script keeps ?keys=, ?unit= and ?mode= only.
    for (const url of ['/board?other=1', '/board?API_KEY=nrk_x', `/board?api_key=${'x'.repeat(300)}`]) {
      const served = await harness.app.inject({ url });
      assert.equal(served.statusCode, 200, url);
      assert.equal(served.headers['cache-control'], 'no-store', url);
    }
    assert.match(script, /history\.replaceState/);
  });

  it('the pages\' font comes from this server: every style sheet names it, and it is served as woff2, cached for good under its content hash', async () => {
    const sheets = ['/home.css', '/account/account.css', '/board/board.css', '/status/status.css'];
    const addresses = new Set<string>();
    for (const sheet of sheets) {
      const css = (await harness.app.inject({ url: sheet })).body;
      const face = /@font-face \{ font-family: Vazirmatn; src: url\("([^"]+)"\) format\("woff2"\);[^}]*font-display: swap;/.exec(css);
      assert.ok(face, `${sheet} declares the bundled font`);
      addresses.add(face[1]!);
      assert.match(css, /\.en \{ direction: ltr; unicode-bidi: isolate; \}/, `${sheet} isolates the English asides`);
    }
    assert.equal(addresses.size, 1, 'one font address for every page');
    const [address] = addresses;
    assert.match(address!, /^\/fonts\/vazirmatn-[0-9a-f]{16}\.woff2$/);

    const font = await harness.app.inject({ url: address! });
    assert.equal(font.statusCode, 200);
    assert.equal(font.headers['content-type'], 'font/woff2');
    assert.equal(font.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(font.headers['x-content-type-options'], 'nosniff');
    const packaged = readFileSync(createRequire(import.meta.url).resolve('vazirmatn/fonts/webfonts/Vazirmatn[wght].woff2'));
    assert.ok(font.rawPayload.equals(packaged), 'the very file the vazirmatn package ships');
    assert.equal(font.rawPayload.subarray(0, 4).toString('latin1'), 'wOF2');
    assert.ok(address!.includes(createHash('sha256').update(packaged).digest('hex').slice(0, 16)), 'its address names its content');
    assert.equal((await harness.app.inject({ method: 'HEAD', url: address! })).statusCode, 200);

    const licence = await harness.app.inject({ url: '/fonts/vazirmatn-OFL.txt' });
    assert.equal(licence.statusCode, 200);
    assert.match(String(licence.headers['content-type']), /^text\/plain/);
    assert.match(licence.body, /SIL OPEN FONT LICENSE Version 1\.1/);

    for (const url of ['/fonts/vazirmatn.woff2', '/fonts/vazirmatn-0000000000000000.woff2', '/fonts/other.woff2', '/fonts/', `${address!}x`]) {
      const missing = await harness.app.inject({ url });
      assert.equal(missing.statusCode, 404, url);
      assert.equal((JSON.parse(missing.body) as { error: string }).error, 'NOT_FOUND', url);
    }
  });

  it('/ is not an API operation', async () => {
    const document = JSON.parse((await harness.app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, unknown> };
    for (const path of ['/', '/home.css', '/account', '/account/uplot.js', '/account/account.css', '/board', '/board/board.js', '/board/board.css', '/status/status.css', '/fonts/vazirmatn-OFL.txt']) assert.ok(!(path in document.paths), `${path} is kept out of the API document`);
  });
});
