/**
 * The tenant-safety rules (docs/reliability.md#safe-for-many-tenants) on the pages and the operational endpoints: every HTML page
 * sends the content policy (nothing inline; `frame-ancestors` as configured),
 * `nosniff` and `no-referrer`, and holds nothing the policy would block;
 * /metrics asks for NERKH_METRICS_TOKEN when one is set (on a serving node
 * and on an ingest-only one); the public status page names no host.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { contentSecurityPolicy, DOCS_STYLE_HASHES } from '../../src/web/security-headers.js';
import { startHarness, type Harness } from '../support/harness.js';

const PAGES = ['/', '/status', '/account', '/board', '/board?api_key=nrk_x&keys=usd_free&API_KEY=y#z', '/docs/', '/docs/static/index.html'];
const TOKEN = 'scrape-3f9a7b1c2d4e5f60';

describe('page security headers and content', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  it("every page sends the policy (frame-ancestors 'none' by default), nosniff and no-referrer", async () => {
    const policy = contentSecurityPolicy("'none'");
    assert.match(policy, /frame-ancestors 'none'/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval|\*/, 'nothing inline, nothing from elsewhere');
    // /docs admits one inline style of swagger-ui's by its hash, and nothing else.
    const docsPolicy = contentSecurityPolicy("'none'", DOCS_STYLE_HASHES);
    assert.equal(docsPolicy, policy.replace("style-src 'self'", `style-src 'self' '${DOCS_STYLE_HASHES[0]}'`));
    assert.doesNotMatch(docsPolicy, /unsafe-inline|unsafe-eval|\*/);
    for (const path of PAGES) {
      const page = await harness.app.inject({ url: path });
      const final = page.statusCode === 302 ? await harness.app.inject({ url: String(page.headers.location) }) : page;
      assert.equal(final.statusCode, 200, `${path}: ${final.body.slice(0, 200)}`);
      assert.match(String(final.headers['content-type']), /^text\/html/, path);
      assert.equal(final.headers['content-security-policy'], path.startsWith('/docs') ? docsPolicy : policy, path);
      assert.equal(final.headers['x-content-type-options'], 'nosniff', path);
      assert.equal(final.headers['referrer-policy'], 'no-referrer', path);
    }
  });

  it('no page holds an inline script, an event handler attribute, a style element or a style attribute', async () => {
    for (const path of ['/', '/status', '/account', '/board', '/docs/']) {
      const body = (await harness.app.inject({ url: path })).body;
      assert.doesNotMatch(body, /<script(?![^>]*\bsrc=)[^>]*>/i, `${path}: an inline script`);
      assert.doesNotMatch(body, /<script[^>]*\bsrc=[^>]*>\s*\S+\s*<\/script>/i, `${path}: a script with a body`);
      assert.doesNotMatch(body, /\son[a-z]+\s*=/i, `${path}: an event handler attribute`);
      assert.doesNotMatch(body, /<style/i, `${path}: a style element`);
      assert.doesNotMatch(body, /\sstyle\s*=/i, `${path}: a style attribute`);
      const assets = [...body.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
      for (const asset of assets) {
        const file = await harness.app.inject({ url: asset });
        assert.equal(file.statusCode, 200, asset);
        assert.equal(file.headers['x-content-type-options'], 'nosniff', asset);
        assert.match(String(file.headers['content-type']), asset.endsWith('.css') ? /^text\/css/ : /javascript/, asset);
      }
    }
    for (const script of ['/account/account.js', '/board/board.js']) {
      const text = (await harness.app.inject({ url: script })).body;
      assert.doesNotMatch(text, /style=|setAttribute\(\s*['"]style|cssText|\son[a-z]+=/, `${script} writes no style or handler attribute`);
    }
  });

  it('answers that are not pages keep their headers as they were (no policy on JSON)', async () => {
    const { key } = await harness.keyFor('json-user');
    for (const url of ['/v1/rates/usd_free', '/v1/rates/%75sd_free', '/healthz', '/nope']) {
      const answer = await harness.app.inject({ url, headers: { 'x-api-key': key } });
      assert.match(String(answer.headers['content-type']), /^application\/json/, url);
      assert.equal(answer.headers['content-security-policy'], undefined, url);
    }
  });

  it('the public status page names no host and no process id', async () => {
    const page = (await harness.app.inject({ url: '/status' })).body;
    assert.ok(hostname().length >= 2, 'a host name to look for');
    assert.ok(!page.includes(hostname()), 'the host name is on the page');
    assert.ok(!page.includes(`-${process.pid}-`), 'the process id is on the page');
    assert.match(page, /<code>[0-9a-f]{6}<\/code>/, 'the node shows as the random tail of its id');
  });
});

describe('frame-ancestors from the configuration', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ config: { frameAncestors: "'self' https://shop.example" } });
  });
  after(() => harness.close());

  it('a shop that embeds its board is named in every page’s policy', async () => {
    for (const path of ['/', '/board', '/docs/']) {
      const policy = String((await harness.app.inject({ url: path })).headers['content-security-policy']);
      assert.match(policy, /(^|; )frame-ancestors 'self' https:\/\/shop\.example$/, path);
      assert.match(policy, /script-src 'self'(;|$)/, path);
    }
  });
});

for (const role of ['all', 'ingest'] as const) {
  describe(`/metrics behind NERKH_METRICS_TOKEN (role ${role})`, () => {
    let harness: Harness;
    before(async () => {
      harness = await startHarness({ config: { metricsToken: TOKEN }, runtime: { role } });
    });
    after(() => harness.close());

    const scrape = (authorization?: string) => harness.app.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } });

    it('refuses a scrape without the token, or with another, in the error envelope with a Bearer challenge', async () => {
      for (const [authorization, code] of [
        [undefined, 'API_KEY_MISSING'],
        ['', 'API_KEY_MISSING'],
        [`Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`, 'API_KEY_MISSING'],
        [TOKEN, 'API_KEY_MISSING'],
        [`Bearer ${TOKEN}x`, 'API_KEY_INVALID'],
        [`Bearer ${TOKEN.slice(0, -1)}`, 'API_KEY_INVALID'],
      ] as const) {
        const answer = await scrape(authorization);
        assert.equal(answer.statusCode, 401, `${authorization}: ${answer.body}`);
        const body = JSON.parse(answer.body) as Record<string, unknown>;
        assert.deepEqual(Object.keys(body), ['success', 'status', 'generated_at', 'error', 'message', 'request_id']);
        assert.equal(body.error, code, String(authorization));
        assert.match(String(answer.headers['www-authenticate']), /^Bearer realm="metrics"/);
        assert.doesNotMatch(answer.body, /nerkh_/, 'no metric leaks out');
      }
      // The token is asked for before the query is read, as a key is.
      assert.equal((await harness.app.inject({ url: '/metrics?x=1' })).statusCode, 401);
    });

    it('serves the metrics to the token, whatever the case of "Bearer"', async () => {
      for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER  ${TOKEN}`]) {
        const answer = await scrape(authorization);
        assert.equal(answer.statusCode, 200, authorization);
        assert.match(answer.body, /^# HELP /m);
      }
    });
  });
}

describe('/metrics without NERKH_METRICS_TOKEN', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  it('is open, as a scraper on a private network expects', async () => {
    const answer = await harness.app.inject({ url: '/metrics' });
    assert.equal(answer.statusCode, 200);
    assert.match(answer.body, /^# HELP /m);
  });
});
