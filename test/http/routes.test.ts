import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { PER_UNITS } from '../../src/domain/reference.js';
import { ENDPOINTS } from '../../src/http/endpoints/registry.js';
import { ErrorSchema } from '../../src/http/schemas.js';
import { CatalogueResponse } from '../../src/http/endpoints/catalogue/schema.js';
import { DetailResponse } from '../../src/http/endpoints/detail/schema.js';
import { API_SCHEMAS } from '../../src/http/endpoints/registry.js';
import { StatusResponse } from '../../src/http/endpoints/status/schema.js';
import { UsageResponse } from '../../src/http/endpoints/usage/schema.js';
import { dialects, json, SAMPLE, startHarness, type Harness } from '../support/harness.js';
import { eventually, writeRaw, writeSource } from '../support/env.js';

/** Responses are checked against the same schemas the OpenAPI document is generated from. */
function assertMatches(schema: TSchema, body: unknown) {
  const ok = Value.Check(schema, API_SCHEMAS, body);
  assert.ok(ok, `response does not match ${schema.$id}: ${JSON.stringify([...Value.Errors(schema, API_SCHEMAS, body)].slice(0, 3).map((e) => `${e.path} ${e.message}`))}`);
}

for (const dialect of dialects()) {
  describe(`routes (${dialect.name})`, dialect.options, () => {
    let harness: Harness;
    let key: string;
    const get = (url: string, headers: Record<string, string> = {}) => harness.app.inject({ url, headers: { 'x-api-key': key, ...headers } });

    before(async () => {
      harness = await startHarness({ databaseUrl: dialect.databaseUrl });
      ({ key } = await harness.keyFor('acme', 'enterprise'));
    });
    after(() => harness.close());

    describe('GET /v1/rates (catalogue)', () => {
      it('lists every active reference without prices', async () => {
        const response = await get('/v1/rates');
        assert.equal(response.statusCode, 200);
        const body = json(response);
        assertMatches(CatalogueResponse, body);
        const references = body.references as Record<string, unknown>[];
        assert.ok(references.length > 300, 'references.length > 300');
        assert.equal(body.count, references.length);
        assert.ok(references.every((r) => !('value' in r) && r.status === 'active' && typeof r.aliases === 'string'), 'references.every((r) => !(\'value\' in r) && r.status === \'active\' && typeof r.aliases === \'string\')');
        assert.match(String(response.headers['cache-control']), /^private, max-age=\d+$/);
      });
      it('says the currency and per of each price, and keeps the sanity band internal', async () => {
        const references = json(await get('/v1/rates')).references as Record<string, unknown>[];
        assert.ok(references.every((r) => typeof r.currency === 'string' && typeof r.per === 'string' && !('min' in r) && !('max' in r)), 'references.every((r) => typeof r.currency === \'string\' && typeof r.per === \'string\' && !(\'min\' in r) && !(\'max\' in r))');
        const byKey = new Map(references.map((r) => [r.key, r]));
        assert.deepEqual(
          ['gold_18k', 'coin_emami', 'jpy_free', 'gold_ounce'].map((key) => [byKey.get(key)?.currency, byKey.get(key)?.per, byKey.get(key)?.unit]),
          [
            ['IRR', 'gram', 'ریال/گرم'],
            ['IRR', 'coin', 'ریال/سکه'],
            ['IRR', '100 units', 'ریال/۱۰۰ ین'],
            ['USD', 'ounce', 'دلار/اونس'],
          ],
        );
      });
      it('filters by category and by q (key, alias, title)', async () => {
        const gold = json(await get('/v1/rates?category=gold')).references as { category: string }[];
        assert.ok(gold.length > 5 && gold.every((r) => r.category === 'gold'), 'gold.length > 5 && gold.every((r) => r.category === \'gold\')');
        const sekkeh = json(await get('/v1/rates?q=sekkeh')).references as { key: string }[];
        assert.ok(sekkeh.some((r) => r.key === 'coin_emami'), 'sekkeh.some((r) => r.key === \'coin_emami\')');
        const persian = json(await get(`/v1/rates?q=${encodeURIComponent('سکه امامی')}`)).references as { key: string }[];
        assert.ok(persian.some((r) => r.key === 'coin_emami'), 'persian.some((r) => r.key === \'coin_emami\')');
      });
      it('rejects a bad or unknown query parameter, naming it', async () => {
        const bad = await get('/v1/rates?category=nonsense');
        assert.equal(bad.statusCode, 400);
        assert.equal(json(bad).error, 'INVALID_PARAMETER');
        assert.equal(json(bad).message, 'Query parameter "category" must be one of: gold, coin, currency, precious_metal, industrial_metal, energy, crypto.');
        const unknown = await get('/v1/rates?categroy=gold');
        assert.equal(json(unknown).error, 'INVALID_PARAMETER');
        assert.match(String(json(unknown).message), /categroy/);
      });
      it('answers If-None-Match with 304', async () => {
        const first = await get('/v1/rates');
        const second = await get('/v1/rates', { 'if-none-match': String(first.headers.etag) });
        assert.equal(second.statusCode, 304);
        assert.equal(second.body, '');
      });
    });

    describe('GET /v1/rates/{keys} (detail)', () => {
      it('resolves aliases to canonical keys, in request order, each once', async () => {
        // On a loaded machine the first answers right after start have served beta's values (cause not
        // yet found); alpha, first in priority, must be serving within a few polls.
        const response = (await eventually(async () => {
          const answer = await get('/v1/rates/sekkeh,usd_free,coin_emami,USD_FREE, gold_18k');
          return answer.statusCode !== 200 || (json(answer).rates as { source: string }[]).every((r) => r.source === 'alpha') ? answer : null;
        }, 5000, 100))!;
        assert.equal(response.statusCode, 200, response.body);
        const body = json(response);
        assertMatches(DetailResponse, body);
        const rates = body.rates as { key: string; value: number; source: string; status: string; updated_at: string }[];
        assert.deepEqual(rates.map((r) => r.key), ['coin_emami', 'usd_free', 'gold_18k']);
        assert.equal(body.count, 3);
        assert.deepEqual(body.meta, { max_keys: 10, includes_prices: true, unknown_keys: [], denied_keys: [] });
        // The harness writes alpha values ending in 1 and beta in 2; alpha is first in priority.
        assert.deepEqual(rates.map((r) => [r.value, r.source, r.status]), [[1_000_000_001, 'alpha', 'ok'], [1_000_001, 'alpha', 'ok'], [100_000_001, 'alpha', 'ok']]);
        assert.match(rates[0]!.updated_at, /\+03:30$/);
      });
      it('lists unknown keys in meta and 404s when nothing resolves', async () => {
        const partial = json(await get('/v1/rates/usd_free,no_such_thing'));
        assert.deepEqual((partial.meta as { unknown_keys: string[] }).unknown_keys, ['no_such_thing']);
        const none = await get('/v1/rates/nothing_here,nor_here');
        assert.equal(none.statusCode, 404);
        assert.equal(json(none).error, 'RATE_NOT_FOUND');
        assertMatches(ErrorSchema, json(none));
      });
      it('validates the keys segment', async () => {
        for (const [path, code] of [
          ['/v1/rates/usd_free,,eur_free', 'INVALID_KEYS'],
          ['/v1/rates/' + encodeURIComponent('usd free'), 'INVALID_KEYS'],
          ['/v1/rates/%E0%A4%A', 'INVALID_KEYS'],
          ['/v1/rates/' + 'x'.repeat(65), 'INVALID_KEYS'],
          ['/v1/rates/a,b,c,d,e,f,g,h,i,j,k', 'RATE_KEYS_LIMIT_EXCEEDED'],
        ] as const) {
          const response = await get(path);
          assert.equal(response.statusCode, 400, path);
          assert.equal(json(response).error, code, path);
        }
        // Eleven names but ten distinct after de-duplication is fine.
        const ten = await get('/v1/rates/a,b,c,d,e,f,g,h,i,usd_free,USD_FREE');
        assert.equal(ten.statusCode, 200, ten.body);
      });
      it('serves values with the exact digits of the source', async () => {
        writeRaw(harness.config.sources[0]!.path!, `{"items":{"${SAMPLE.usd_free}":1234567,"${SAMPLE.gold_ounce}":300.50},"updated_at":"${new Date().toISOString()}"}`);
        const body = await eventually(async () => {
          const response = await get('/v1/rates/usd_free,gold_ounce');
          return response.body.includes('"value":300.50') ? response.body : null;
        }, 4000);
        assert.ok(body?.includes('"value":1234567'), 'body?.includes(\'"value":1234567\')');
      });
      it('304 for an unchanged selection, a new ETag when a value changes', async () => {
        const first = await get('/v1/rates/usd_free');
        assert.equal((await get('/v1/rates/usd_free', { 'if-none-match': String(first.headers.etag) })).statusCode, 304);
        writeSource(harness.config.sources[0]!.path!, { [SAMPLE.usd_free]: 1111111 });
        await eventually(async () => (await get('/v1/rates/usd_free', { 'if-none-match': String(first.headers.etag) })).statusCode === 200, 4000);
      });
      it('HEAD answers like GET without a body', async () => {
        const response = await harness.app.inject({ method: 'HEAD', url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
        assert.equal(response.statusCode, 200);
        assert.equal(response.body, '');
        assert.ok(response.headers.etag, 'response.headers.etag');
      });
    });

    describe('reference allowance', () => {
      it('lists keys outside the selection in denied_keys and 403s when none is left', async () => {
        const { key: basic } = await harness.keyFor('small-shop', 'basic', { references: ['usd_free', 'coin_emami'] });
        const mixed = await harness.app.inject({ url: '/v1/rates/usd_free,gold_ounce,nope', headers: { 'x-api-key': basic } });
        assert.equal(mixed.statusCode, 200);
        assert.deepEqual(json(mixed).meta, { max_keys: 10, includes_prices: true, unknown_keys: ['nope'], denied_keys: ['gold_ounce'] });
        const twice = await harness.app.inject({ url: '/v1/rates/usd_free,gold_ounce,ons', headers: { 'x-api-key': basic } });
        assert.deepEqual((json(twice).meta as { denied_keys: string[] }).denied_keys, ['gold_ounce'], 'a reference is denied once, under the first name asked');
        const denied = await harness.app.inject({ url: '/v1/rates/gold_ounce', headers: { 'x-api-key': basic } });
        assert.equal(denied.statusCode, 403);
        assert.equal(json(denied).error, 'REFERENCE_NOT_IN_PLAN');
      });
      it('gives an account with no selection its plan defaults', async () => {
        const { key: basic } = await harness.keyFor('default-shop', 'basic');
        const feed = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': basic } });
        assert.equal(feed.statusCode, 200, feed.body);
        const plan = harness.runtime.directory!.account('default-shop')!.plan;
        assert.equal(plan.default_references.length, 50);
        assert.equal(harness.runtime.directory!.account('default-shop')!.allowance!.size, 50);
      });
    });

    describe('GET /v1/status and /status', () => {
      it('reports service, endpoints and sources', async () => {
        const body = json(await get('/v1/status'));
        assertMatches(StatusResponse, body);
        assert.deepEqual((body.sources as { name: string }[]).map((s) => s.name), ['alpha', 'beta']);
      });
      it('shows a public HTML page without a key', async () => {
        const page = await harness.app.inject({ url: '/status' });
        assert.equal(page.statusCode, 200);
        assert.match(String(page.headers['content-type']), /^text\/html/);
        assert.match(page.body, /http-equiv="refresh"/);
        assert.match(page.body, /alpha/);
        assert.match(page.body, /وضعیت سرویس/);
      });
    });

    describe('GET /webservice/{username}', () => {
      it("serves the owner's allowance in the flat webservice shape", async () => {
        const { key: own } = await harness.keyFor('old-board', 'pro', { references: ['usd_free', 'coin_emami'] });
        const response = await harness.app.inject({ url: '/webservice/old-board', headers: { 'x-api-key': own } });
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
        const { key: own } = await harness.keyFor('board-two', 'pro');
        const other = await harness.app.inject({ url: '/webservice/acme', headers: { 'x-api-key': own } });
        const missing = await harness.app.inject({ url: '/webservice/no-such-user', headers: { 'x-api-key': own } });
        assert.equal(other.statusCode, 403);
        assert.equal(missing.statusCode, 403);
        assert.equal(json(other).message, json(missing).message);
        assert.equal(json(other).error, json(missing).error);
      });
    });

    describe('GET /v1/usage', () => {
      it('counts every request of the account, ok and failed, per day and service', async () => {
        const { key: own } = await harness.keyFor('metered', 'basic');
        for (let i = 0; i < 3; i++) await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': own } });
        await harness.app.inject({ url: '/v1/rates/nothing_at_all', headers: { 'x-api-key': own } });
        await harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': own } });
        const response = await harness.app.inject({ url: '/v1/usage?days=7', headers: { 'x-api-key': own } });
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
        const { key: own } = await harness.keyFor('reporting', 'basic');
        const ask = (days: number) => harness.app.inject({ url: `/v1/usage?days=${days}`, headers: { 'x-api-key': own } });
        const concurrent = await Promise.all([ask(7), ask(7), ask(1), ask(90)]);
        for (const response of concurrent) assert.equal(response.statusCode, 200, response.body);
        const stamps = new Set(concurrent.map((response) => json(response).generated_at));
        assert.equal(stamps.size, 1, 'one read served all four');
        assert.deepEqual(concurrent.map((response) => (json(response).daily as unknown[]).length), [7, 7, 1, 90]);
        await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': own } });
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        const later = json(await ask(7));
        assert.notEqual(later.generated_at, [...stamps][0]);
        const services = Object.fromEntries((later.services as { service: string; requests: number }[]).map((s) => [s.service, s.requests]));
        assert.deepEqual(services, { usage: 4, detail: 1 });
      });
      it('validates days', async () => {
        for (const days of ['0', '91', 'abc']) {
          const response = await get(`/v1/usage?days=${days}`);
          assert.equal(response.statusCode, 400, days);
          assert.equal(json(response).error, 'INVALID_PARAMETER');
        }
      });
    });

    describe('rate limits', () => {
      it('answers the request past the minute limit with 429 and Retry-After, with headers on every response', async () => {
        const { key: limited } = await harness.keyFor('five-a-minute', 'basic', { overrides: { requests_per_minute: 5 } });
        const responses = [];
        for (let i = 0; i < 6; i++) responses.push(await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': limited } }));
        for (const response of responses.slice(0, 5)) assert.equal(response.statusCode, 200);
        assert.deepEqual(responses.map((r) => r.headers['x-ratelimit-remaining']), ['4', '3', '2', '1', '0', '0']);
        assert.equal(responses[0]!.headers['ratelimit-policy'], '"minute";q=5;w=60, "day";q=10000;w=86400');
        assert.match(String(responses[0]!.headers.ratelimit), /^"minute";r=4;t=\d+$/);
        const refused = responses[5]!;
        assert.equal(refused.statusCode, 429);
        assert.equal(json(refused).error, 'RATE_LIMIT_EXCEEDED');
        const retry = Number(refused.headers['retry-after']);
        assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      });
      it('throttles repeated bad keys from one address but not a good key from it', async () => {
        const bad = { 'x-api-key': 'nrk_' + 'B'.repeat(32) };
        const address = '10.9.8.7';
        let last;
        for (let i = 0; i < 31; i++) last = await harness.app.inject({ url: '/v1/rates', headers: bad, remoteAddress: address });
        assert.equal(last!.statusCode, 429);
        assert.equal(json(last!).error, 'TOO_MANY_FAILED_ATTEMPTS');
        assert.ok(Number(last!.headers['retry-after']) >= 1, 'Number(last!.headers[\'retry-after\']) >= 1');
        const good = await harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': key }, remoteAddress: address });
        assert.equal(good.statusCode, 200);
        const elsewhere = await harness.app.inject({ url: '/v1/rates', headers: bad, remoteAddress: '10.9.8.8' });
        assert.equal(elsewhere.statusCode, 401);
      });
    });

    describe('origins and CORS', () => {
      it('allows any origin by default and enforces an account allow-list', async () => {
        const open = await get('/v1/rates/usd_free', { origin: 'https://shop.example' });
        assert.equal(open.headers['access-control-allow-origin'], 'https://shop.example');
        const { key: strict } = await harness.keyFor('strict-origin', 'pro', { origins: ['https://board.example'] });
        const allowed = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': strict, origin: 'https://board.example' } });
        assert.equal(allowed.statusCode, 200);
        const refused = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': strict, origin: 'https://evil.example' } });
        assert.equal(refused.statusCode, 403);
        assert.equal(json(refused).error, 'ORIGIN_NOT_ALLOWED');
        const serverSide = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': strict } });
        assert.equal(serverSide.statusCode, 200);
      });
      it('answers preflight requests', async () => {
        const response = await harness.app.inject({ method: 'OPTIONS', url: '/v1/rates/usd_free', headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' } });
        assert.equal(response.statusCode, 204);
        assert.match(String(response.headers['access-control-allow-headers']), /x-api-key/);
      });
    });

    describe('wire conventions', () => {
      it('404 NOT_FOUND and 405 METHOD_NOT_ALLOWED in the error envelope', async () => {
        const missing = await get('/v2/anything');
        assert.equal(missing.statusCode, 404);
        assert.equal(json(missing).error, 'NOT_FOUND');
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
          const response = await harness.app.inject({ method, url: '/v1/rates', headers: { 'x-api-key': key }, payload: '{}' });
          assert.equal(response.statusCode, 405, method);
          assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS');
          assert.equal(json(response).error, 'METHOD_NOT_ALLOWED');
        }
      });
      it('rejects an unknown query parameter on every endpoint, naming it, after the key checks', async () => {
        const { key: own } = await harness.keyFor('query-board', 'enterprise');
        const { key: pro } = await harness.keyFor('query-feed', 'pro');
        const keyed: [string, string][] = [
          ['/v1/rates', own],
          ['/v1/rates/usd_free', own],
          ['/v1/rates/usd_free/history', own],
          ['/v1/stream', own],
          ['/v1/status', own],
          ['/v1/usage', own],
          ['/v1/webhooks', own],
          ['/webservice/query-feed', pro],
        ];
        for (const [path, owner] of keyed) {
          const unkeyed = await harness.app.inject({ url: `${path}?foo=1` });
          assert.equal(json(unkeyed).error, 'API_KEY_MISSING', `${path}: the key is checked before the query`);
          const response = await harness.app.inject({ url: `${path}?foo=1`, headers: { 'x-api-key': owner } });
          assert.equal(response.statusCode, 400, path);
          assert.equal(json(response).error, 'INVALID_PARAMETER', path);
          assert.match(String(json(response).message), /^Unknown query parameter "foo"; this endpoint takes/, path);
          assert.ok(response.headers['x-ratelimit-limit'], `${path}: the refusal is counted`);
        }
        for (const path of ['/healthz', '/readyz', '/metrics', '/status', '/openapi.json']) {
          const response = await harness.app.inject({ url: `${path}?foo=1` });
          assert.equal(response.statusCode, 400, path);
          assert.equal(json(response).message, 'Unknown query parameter "foo"; this endpoint takes none.', path);
        }
        assert.match(String(json(await get('/v1/rates?foo=1')).message), /takes category, q, in_plan\.$/);
        assert.match(String(json(await get('/v1/rates/usd_free?foo=1')).message), /takes unit, expand, at\.$/);
        assert.match(String(json(await get('/v1/rates/usd_free?at=2026-11-01&foo=1')).message), /takes at, unit\.$/);
        assert.match(String(json(await get('/v1/rates/usd_free/history?foo=1')).message), /takes interval, from, to, unit\.$/);
        assert.match(String(json(await get('/v1/stream?foo=1')).message), /takes keys, api_key, unit, alerts\.$/);
        // Enum errors list the allowed values, wherever `unit` is taken.
        for (const path of ['/v1/rates/usd_free', '/v1/rates/usd_free/history', '/v1/stream', '/webservice/acme', '/v1/rates/usd_free?at=2026-11-01&x=']) {
          const url = path.includes('?') ? path.replace('&x=', '&unit=dinar') : `${path}?unit=dinar`;
          const response = await get(url);
          assert.equal(response.statusCode, 400, url);
          assert.equal(json(response).message, 'Query parameter "unit" must be one of: rial, toman.', url);
        }
        assert.match(String(json(await get('/webservice/acme?foo=1')).message), /takes unit\.$/);
        assert.match(String(json(await get('/v1/usage?foo=1')).message), /takes days\.$/);
        assert.match(String(json(await get('/v1/webhooks?foo=1')).message), /takes none\.$/);
        // An empty query string is no parameter at all.
        assert.equal((await get('/v1/rates/usd_free?')).statusCode, 200);
        assert.equal((await harness.app.inject({ url: '/healthz?' })).statusCode, 200);
      });
      it('echoes a sane x-request-id and replaces an insane one', async () => {
        assert.equal((await get('/v1/rates/usd_free', { 'x-request-id': 'board-42.req:7' })).headers['x-request-id'], 'board-42.req:7');
        const replaced = await get('/v1/rates/usd_free', { 'x-request-id': 'a b<script>' });
        assert.notEqual(replaced.headers['x-request-id'], 'a b<script>');
        assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      });
      it('serves probes, metrics, the OpenAPI document and the docs', async () => {
        assert.equal((await harness.app.inject('/healthz')).statusCode, 200);
        assert.equal((await harness.app.inject('/readyz')).statusCode, 200);
        const metrics = await harness.app.inject('/metrics');
        assert.match(metrics.body, /nerkh_http_requests_total\{route="\/v1\/rates\/:keys",method="GET",status="200"\}/);
        assert.match(metrics.body, /nerkh_source_age_seconds\{source="alpha"\}/);
        const openapi = json(await harness.app.inject('/openapi.json'));
        assert.equal(openapi.openapi, '3.1.0');
        // Every path of the registry's endpoints, and the probes and metrics besides.
        const keyedPaths = ENDPOINTS.flatMap((endpoint) => Object.keys(endpoint.examples)).map((path) => path.replace(/:(\w+)/g, '{$1}'));
        assert.deepEqual(Object.keys(openapi.paths as object).sort(), [...keyedPaths, '/healthz', '/metrics', '/readyz'].sort());
        // Fixed vocabularies are plain enums in the document, not unions of constants.
        const schemas = (openapi.components as { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> }).schemas;
        assert.deepEqual(schemas.Rate!.properties.per!.enum, [...PER_UNITS]);
        assert.deepEqual(schemas.Reference!.properties.per!.enum, [...PER_UNITS]);
        // One currency vocabulary, shared by reference: ISO 4217 and IRT (toman).
        const currencies = (schemas.Currency as unknown as { enum: string[] }).enum;
        for (const code of ['IRR', 'IRT', 'USD', 'EUR', 'XXX', 'XAU']) assert.ok(currencies.includes(code), code);
        for (const schema of ['Rate', 'Reference', 'WebserviceEntry', 'HistoryResponse']) {
          assert.deepEqual(schemas[schema]!.properties.currency, { $ref: '#/components/schemas/Currency' }, schema);
        }
        const detail = (openapi.paths as Record<string, { get: { parameters: { name: string; in: string; schema: { enum?: string[] } }[] } }>)['/v1/rates/{keys}']!.get;
        assert.deepEqual(
          detail.parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema.enum]),
          [
            ['unit', ['rial', 'toman']],
            ['expand', ['sources']],
            ['at', undefined],
          ],
        );
        const docs = await harness.app.inject('/docs/');
        assert.equal(docs.statusCode, 200);
        assert.doesNotMatch(docs.body, /cdn\.|unpkg|jsdelivr/);
      });
    });
  });
}
