import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PER_UNITS } from '../../src/domain/reference.js';
import { ENDPOINTS } from '../../src/http/endpoints/registry.js';
import { json } from '../support/harness.js';
import { routeSuite } from '../support/route-suite.js';

// What several endpoints share (allowances, limits, origins, the wire); each endpoint's own routes are tested beside it.
routeSuite('routes', (s) => {
  describe('reference allowance', () => {
    it('lists keys outside the selection in denied_keys and 403s when none is left', async () => {
      const { key: basic } = await s.harness.keyFor('small-shop', 'basic', { references: ['usd_free', 'coin_emami'] });
      const mixed = await s.harness.app.inject({ url: '/v1/rates/usd_free,gold_ounce,nope', headers: { 'x-api-key': basic } });
      assert.equal(mixed.statusCode, 200);
      assert.deepEqual(json(mixed).meta, { max_keys: 10, includes_prices: true, unknown_keys: ['nope'], denied_keys: ['gold_ounce'] });
      const twice = await s.harness.app.inject({ url: '/v1/rates/usd_free,gold_ounce,ons', headers: { 'x-api-key': basic } });
      assert.deepEqual((json(twice).meta as { denied_keys: string[] }).denied_keys, ['gold_ounce'], 'a reference is denied once, under the first name asked');
      const denied = await s.harness.app.inject({ url: '/v1/rates/gold_ounce', headers: { 'x-api-key': basic } });
      assert.equal(denied.statusCode, 403);
      assert.equal(json(denied).error, 'REFERENCE_NOT_IN_PLAN');
    });
    it('gives an account with no selection its plan defaults', async () => {
      const { key: basic } = await s.harness.keyFor('default-shop', 'basic');
      const feed = await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': basic } });
      assert.equal(feed.statusCode, 200, feed.body);
      const plan = s.harness.runtime.directory!.account('default-shop')!.plan;
      assert.equal(plan.default_references.length, 50);
      assert.equal(s.harness.runtime.directory!.account('default-shop')!.allowance!.size, 50);
    });
  });

  describe('rate limits', () => {
    it('answers the request past the minute limit with 429 and Retry-After, with headers on every response', async () => {
      const { key: limited } = await s.harness.keyFor('five-a-minute', 'basic', { overrides: { requests_per_minute: 5 } });
      const responses = [];
      for (let i = 0; i < 6; i++) responses.push(await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': limited } }));
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
      for (let i = 0; i < 31; i++) last = await s.harness.app.inject({ url: '/v1/rates', headers: bad, remoteAddress: address });
      assert.equal(last!.statusCode, 429);
      assert.equal(json(last!).error, 'TOO_MANY_FAILED_ATTEMPTS');
      assert.ok(Number(last!.headers['retry-after']) >= 1, 'Number(last!.headers[\'retry-after\']) >= 1');
      const good = await s.harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': s.key }, remoteAddress: address });
      assert.equal(good.statusCode, 200);
      const elsewhere = await s.harness.app.inject({ url: '/v1/rates', headers: bad, remoteAddress: '10.9.8.8' });
      assert.equal(elsewhere.statusCode, 401);
    });
  });

  describe('origins and CORS', () => {
    it('allows any origin by default and enforces an account allow-list', async () => {
      const open = await s.get('/v1/rates/usd_free', { origin: 'https://shop.example' });
      assert.equal(open.headers['access-control-allow-origin'], 'https://shop.example');
      const { key: strict } = await s.harness.keyFor('strict-origin', 'pro', { origins: ['https://board.example'] });
      const allowed = await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': strict, origin: 'https://board.example' } });
      assert.equal(allowed.statusCode, 200);
      const refused = await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': strict, origin: 'https://evil.example' } });
      assert.equal(refused.statusCode, 403);
      assert.equal(json(refused).error, 'ORIGIN_NOT_ALLOWED');
      const serverSide = await s.harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': strict } });
      assert.equal(serverSide.statusCode, 200);
    });
    it('answers preflight requests', async () => {
      const response = await s.harness.app.inject({ method: 'OPTIONS', url: '/v1/rates/usd_free', headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' } });
      assert.equal(response.statusCode, 204);
      assert.match(String(response.headers['access-control-allow-headers']), /x-api-key/);
    });
  });

  describe('wire conventions', () => {
    it('404 NOT_FOUND and 405 METHOD_NOT_ALLOWED in the error envelope', async () => {
      const missing = await s.get('/v2/anything');
      assert.equal(missing.statusCode, 404);
      assert.equal(json(missing).error, 'NOT_FOUND');
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
        const response = await s.harness.app.inject({ method, url: '/v1/rates', headers: { 'x-api-key': s.key }, payload: '{}' });
        assert.equal(response.statusCode, 405, method);
        assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS');
        assert.equal(json(response).error, 'METHOD_NOT_ALLOWED');
      }
    });
    it('rejects an unknown query parameter on every endpoint, naming it, after the key checks', async () => {
      const { key: own } = await s.harness.keyFor('query-board', 'enterprise');
      const { key: pro } = await s.harness.keyFor('query-feed', 'pro');
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
        const unkeyed = await s.harness.app.inject({ url: `${path}?foo=1` });
        assert.equal(json(unkeyed).error, 'API_KEY_MISSING', `${path}: the key is checked before the query`);
        const response = await s.harness.app.inject({ url: `${path}?foo=1`, headers: { 'x-api-key': owner } });
        assert.equal(response.statusCode, 400, path);
        assert.equal(json(response).error, 'INVALID_PARAMETER', path);
        assert.match(String(json(response).message), /^Unknown query parameter "foo"; this endpoint takes/, path);
        assert.ok(response.headers['x-ratelimit-limit'], `${path}: the refusal is counted`);
      }
      for (const path of ['/healthz', '/readyz', '/metrics', '/status', '/openapi.json']) {
        const response = await s.harness.app.inject({ url: `${path}?foo=1` });
        assert.equal(response.statusCode, 400, path);
        assert.equal(json(response).message, 'Unknown query parameter "foo"; this endpoint takes none.', path);
      }
      assert.match(String(json(await s.get('/v1/rates?foo=1')).message), /takes category, q, in_plan\.$/);
      assert.match(String(json(await s.get('/v1/rates/usd_free?foo=1')).message), /takes unit, expand, at\.$/);
      assert.match(String(json(await s.get('/v1/rates/usd_free?at=2026-11-01&foo=1')).message), /takes at, unit\.$/);
      assert.match(String(json(await s.get('/v1/rates/usd_free/history?foo=1')).message), /takes interval, from, to, unit\.$/);
      assert.match(String(json(await s.get('/v1/stream?foo=1')).message), /takes keys, api_key, unit, alerts\.$/);
      // Enum errors list the allowed values, wherever `unit` is taken.
      for (const path of ['/v1/rates/usd_free', '/v1/rates/usd_free/history', '/v1/stream', '/webservice/acme', '/v1/rates/usd_free?at=2026-11-01&x=']) {
        const url = path.includes('?') ? path.replace('&x=', '&unit=dinar') : `${path}?unit=dinar`;
        const response = await s.get(url);
        assert.equal(response.statusCode, 400, url);
        assert.equal(json(response).message, 'Query parameter "unit" must be one of: rial, toman.', url);
      }
      assert.match(String(json(await s.get('/webservice/acme?foo=1')).message), /takes unit\.$/);
      assert.match(String(json(await s.get('/v1/usage?foo=1')).message), /takes days\.$/);
      assert.match(String(json(await s.get('/v1/webhooks?foo=1')).message), /takes none\.$/);
      // An empty query string is no parameter at all.
      assert.equal((await s.get('/v1/rates/usd_free?')).statusCode, 200);
      assert.equal((await s.harness.app.inject({ url: '/healthz?' })).statusCode, 200);
    });
    it('echoes a sane x-request-id and replaces an insane one', async () => {
      assert.equal((await s.get('/v1/rates/usd_free', { 'x-request-id': 'board-42.req:7' })).headers['x-request-id'], 'board-42.req:7');
      const replaced = await s.get('/v1/rates/usd_free', { 'x-request-id': 'a b<script>' });
      assert.notEqual(replaced.headers['x-request-id'], 'a b<script>');
      assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });
    it('serves probes, metrics, the OpenAPI document and the docs', async () => {
      assert.equal((await s.harness.app.inject('/healthz')).statusCode, 200);
      assert.equal((await s.harness.app.inject('/readyz')).statusCode, 200);
      const metrics = await s.harness.app.inject('/metrics');
      assert.match(metrics.body, /nerkh_http_requests_total\{route="\/v1\/rates\/:keys",method="GET",status="200"\}/);
      assert.match(metrics.body, /nerkh_source_age_seconds\{source="alpha"\}/);
      const openapi = json(await s.harness.app.inject('/openapi.json'));
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
      const docs = await s.harness.app.inject('/docs/');
      assert.equal(docs.statusCode, 200);
      assert.doesNotMatch(docs.body, /cdn\.|unpkg|jsdelivr/);
    });
  });
});
