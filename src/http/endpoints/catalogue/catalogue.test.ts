import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { CatalogueResponse } from './schema.js';
import { API_SCHEMAS } from '../../../http/endpoints/registry.js';
import { json, startHarness, type Harness } from '../../../../test/support/harness.js';

interface Reference {
  key: string;
  title: string;
  category: string;
  in_plan: boolean;
}

describe('catalogue with a key: in_plan and Persian-aware search', () => {
  let harness: Harness;
  let everything: string;
  let chosen: string;
  const list = async (url: string, key = everything) => {
    const response = await harness.app.inject({ url, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.ok(Value.Check(CatalogueResponse, API_SCHEMAS, body), JSON.stringify([...Value.Errors(CatalogueResponse, API_SCHEMAS, body)].slice(0, 3)));
    assert.equal(body.count, (body.references as unknown[]).length);
    return body.references as Reference[];
  };

  before(async () => {
    harness = await startHarness();
    everything = (await harness.keyFor('all-refs', 'enterprise')).key;
    chosen = (await harness.keyFor('two-refs', 'basic', { references: ['usd_free', 'sekkeh'] })).key;
  });
  after(() => harness.close());

  it('marks each reference in or out of the caller’s allowance', async () => {
    const all = await list('/v1/rates', chosen);
    assert.ok(all.length > 300, 'all.length > 300');
    assert.deepEqual(all.filter((r) => r.in_plan).map((r) => r.key).sort(), ['coin_emami', 'usd_free']);
    assert.ok((await list('/v1/rates')).every((r) => r.in_plan), 'an account without a reference limit has every reference');
  });

  it('filters with ?in_plan=true|false, alone or with the other filters', async () => {
    const all = await list('/v1/rates', chosen);
    assert.deepEqual((await list('/v1/rates?in_plan=true', chosen)).map((r) => r.key).sort(), ['coin_emami', 'usd_free']);
    assert.equal((await list('/v1/rates?in_plan=false', chosen)).length, all.length - 2);
    assert.deepEqual((await list('/v1/rates?in_plan=true&category=coin', chosen)).map((r) => r.key), ['coin_emami']);
    assert.deepEqual((await list('/v1/rates?in_plan=true&q=dollar', chosen)).map((r) => r.key), ['usd_free']);
    assert.equal((await list('/v1/rates?in_plan=false')).length, 0);
  });

  it('gives listings that differ in in_plan different ETags', async () => {
    const mine = await harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': chosen } });
    const theirs = await harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': everything } });
    assert.notEqual(mine.headers.etag, theirs.headers.etag);
    const again = await harness.app.inject({ url: '/v1/rates', headers: { 'x-api-key': chosen, 'if-none-match': String(mine.headers.etag) } });
    assert.equal(again.statusCode, 304);
  });

  it('rejects a bad in_plan value, listing the allowed ones', async () => {
    const response = await harness.app.inject({ url: '/v1/rates?in_plan=yes', headers: { 'x-api-key': chosen } });
    assert.equal(response.statusCode, 400);
    assert.deepEqual([json(response).error, json(response).message], ['INVALID_PARAMETER', 'Query parameter "in_plan" must be one of: true, false.']);
  });

  it('finds the same with Arabic kaf and yeh as with the Persian letters', async () => {
    const persian = await list(`/v1/rates?q=${encodeURIComponent('سکه')}`);
    const arabic = await list(`/v1/rates?q=${encodeURIComponent('سكه')}`);
    assert.equal(persian.length, 37);
    assert.deepEqual(arabic.map((r) => r.key), persian.map((r) => r.key));
    const yeh = await list(`/v1/rates?q=${encodeURIComponent('روپيه')}`);
    assert.ok(yeh.length > 0 && yeh.every((r) => r.title.includes('روپیه')), yeh.map((r) => r.title).join(', '));
  });

  it('ignores the zero-width non-joiner, in the query and in titles', async () => {
    const joined = await list(`/v1/rates?q=${encodeURIComponent('هنگ\u200cکنگ')}`);
    const bare = await list(`/v1/rates?q=${encodeURIComponent('هنگکنگ')}`);
    assert.ok(joined.length >= 2, joined.map((r) => r.title).join(', '));
    assert.deepEqual(bare.map((r) => r.key), joined.map((r) => r.key));
    assert.deepEqual((await list(`/v1/rates?q=${encodeURIComponent('هنگ\u200cكنگ')}`)).map((r) => r.key), joined.map((r) => r.key));
  });

  it('finds what people type: a space for the non-joiner, a word and a number, one word of many titles', async () => {
    const keys = async (q: string) => (await list(`/v1/rates?q=${encodeURIComponent(q)}`)).map((r) => r.key);
    const bitcoin = await keys('بیت کوین');
    assert.equal(bitcoin[0], 'btc_usd', bitcoin.join(', '));
    assert.deepEqual(await keys('بیت\u200cکوین'), bitcoin, 'the non-joiner, a space: one search');
    const gold = await keys('طلا ۱۸');
    assert.equal(gold[0], 'gold_18k', gold.join(', '));
    assert.deepEqual(await keys('طلا 18'), gold);
    const dollar = await keys('دلار');
    assert.equal(dollar[0], 'usd_free', dollar.slice(0, 5).join(', '));
    // A filter keeps the search's order.
    assert.deepEqual((await list(`/v1/rates?category=currency&q=${encodeURIComponent('دلار')}`)).map((r) => r.key).slice(0, 1), ['usd_free']);
  });

  it('is case-insensitive and matches Persian digits as ASCII', async () => {
    const lower = await list('/v1/rates?q=btc');
    assert.ok(lower.length > 0, 'lower.length > 0');
    assert.deepEqual((await list('/v1/rates?q=BTC')).map((r) => r.key), lower.map((r) => r.key));
    const persianDigits = await list(`/v1/rates?q=${encodeURIComponent('۱۸ عیار')}`);
    assert.ok(persianDigits.length > 0, 'persianDigits.length > 0');
    assert.deepEqual((await list(`/v1/rates?q=${encodeURIComponent('18 عیار')}`)).map((r) => r.key), persianDigits.map((r) => r.key));
  });
});
