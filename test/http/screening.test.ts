import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { DetailResponse } from '../../src/http/endpoints/detail/schema.js';
import { API_SCHEMAS } from '../../src/http/endpoints/registry.js';
import { json, SAMPLE, startHarness, type Harness } from '../support/harness.js';
import { eventually, fileSources, tempDir, writeSource } from '../support/env.js';

interface SourceView {
  name: string;
  value: number | null;
  updated_at: string | null;
  state: string;
  used: boolean;
  rejected: string | null;
}
interface ExpandedRate {
  key: string;
  value: number;
  source: string;
  status: string;
  sources: SourceView[];
}

describe('outlier screening with three sources, shown by expand=sources, the status page and metrics', () => {
  let harness: Harness;
  let key: string;
  const dir = tempDir();
  const paths: Record<string, string> = {};
  const expanded = async (url: string) => {
    const response = await harness.app.inject({ url, headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    return json(response).rates as ExpandedRate[];
  };

  before(async () => {
    const sources = fileSources(join(dir.path, 'feeds'), ['alpha', 'beta', 'gamma']);
    harness = await startHarness({ config: { sources } });
    for (const source of sources) paths[source.name] = source.path!;
    // Live, so each write shows at once.
    ({ key } = await harness.keyFor('screen-board', 'enterprise', { overrides: { refresh_interval_seconds: 0 } }));
  });
  after(async () => {
    await harness.close();
    dir.cleanup();
  });

  it('never serves an outlier, even from the source first in priority', async () => {
    // alpha sends a toman figure in its rial feed: ten times too small, but inside the sanity band.
    writeSource(paths.alpha!, { [SAMPLE.usd_free]: 100_000, [SAMPLE.eur_free]: 1_200_001 });
    writeSource(paths.beta!, { [SAMPLE.usd_free]: 1_000_002, [SAMPLE.eur_free]: 1_200_002 });
    writeSource(paths.gamma!, { [SAMPLE.usd_free]: 1_000_003 });
    const [usd, eur] = (await eventually(async () => {
      const rates = await expanded('/v1/rates/usd_free,eur_free?expand=sources');
      // Every source's new figure read, gamma's too (it serves nothing, so the values alone do not show it).
      const gamma = rates[0]!.sources.find((s) => s.name === 'gamma');
      return rates[0]!.value === 1_000_002 && rates[1]!.value === 1_200_001 && gamma?.value === 1_000_003 ? rates : null;
    }, 4000))!;
    assert.deepEqual([usd!.source, usd!.status], ['beta', 'ok']);
    assert.deepEqual(
      usd!.sources.map((s) => [s.name, s.value, s.used, s.rejected, s.state]),
      [
        ['alpha', 100_000, false, 'outlier', 'active'],
        ['beta', 1_000_002, true, null, 'active'],
        ['gamma', 1_000_003, false, null, 'active'],
      ],
    );
    assert.ok(usd!.sources.every((s) => typeof s.updated_at === 'string' && s.updated_at.endsWith('+03:30')), 'usd!.sources.every((s) => typeof s.updated_at === \'string\' && s.updated_at.endsWith(\'+03:30\'))');
    // Two fresh values are not enough to call one wrong: alpha, first in priority, serves eur.
    assert.deepEqual(
      eur!.sources.map((s) => [s.name, s.value, s.used, s.rejected]),
      [
        ['alpha', 1_200_001, true, null],
        ['beta', 1_200_002, false, null],
        ['gamma', null, false, null],
      ],
    );
  });

  it('expand=sources matches the schema, in toman too, and the plain answer has no sources', async () => {
    const response = await harness.app.inject({ url: '/v1/rates/usd_free,gold_ounce?expand=sources&unit=toman', headers: { 'x-api-key': key } });
    const body = json(response);
    assert.ok(Value.Check(DetailResponse, API_SCHEMAS, body), JSON.stringify([...Value.Errors(DetailResponse, API_SCHEMAS, body)].slice(0, 3)));
    const usd = (body.rates as ExpandedRate[])[0]!;
    assert.deepEqual(usd.sources.map((s) => s.value), [10_000, 100_000.2, 100_000.3]);
    const plain = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
    assert.ok(!plain.body.includes('"sources"'), '!plain.body.includes(\'"sources"\')');
    assert.notEqual(plain.headers.etag, response.headers.etag);
  });

  it('names unhealthy and out-of-range values', async () => {
    writeSource(paths.gamma!, { [SAMPLE.usd_free]: 1_000_003, [SAMPLE.coin_emami]: 3 });
    const [coin] = (await eventually(async () => {
      const rates = await expanded('/v1/rates/coin_emami?expand=sources');
      return rates[0]!.sources[2]!.value === 3 ? rates : null;
    }, 4000))!;
    assert.deepEqual(coin!.sources[2], { ...coin!.sources[2]!, rejected: 'out_of_range', used: false });
  });

  it('counts outliers per source on the status page and in /metrics', async () => {
    const page = await harness.app.inject({ url: '/status' });
    assert.match(page.body, /1 value rejected as outlier/);
    assert.match(page.body, /مقدار ناهمخوان با منابع دیگر کنار گذاشته شد/);
    const status = json(await harness.app.inject({ url: '/v1/status', headers: { 'x-api-key': key } }));
    const alpha = (status.sources as { name: string; error: string | null }[]).find((s) => s.name === 'alpha')!;
    assert.match(String(alpha.error), /1 value rejected as outlier/);
    const metrics = (await harness.app.inject({ url: '/metrics' })).body;
    assert.match(metrics, /nerkh_source_values_outliers\{source="alpha"\} 1\n/);
    assert.match(metrics, /nerkh_source_values_outliers\{source="beta"\} 0\n/);
    assert.match(metrics, /# TYPE nerkh_source_outliers_total counter\n/);
    assert.match(metrics, /nerkh_source_outliers_total\{source="alpha"\} 1\n/);
  });

  it('serves alpha again once it agrees with the others', async () => {
    writeSource(paths.alpha!, { [SAMPLE.usd_free]: 1_000_001 });
    await eventually(async () => (await expanded('/v1/rates/usd_free?expand=sources'))[0]!.source === 'alpha', 4000);
    const metrics = (await harness.app.inject({ url: '/metrics' })).body;
    assert.match(metrics, /nerkh_source_values_outliers\{source="alpha"\} 0\n/);
    assert.match(metrics, /nerkh_source_outliers_total\{source="alpha"\} 1\n/, 'the count since start stays');
  });
});

describe('jump hold (screening.max_jump_percent)', () => {
  let harness: Harness;
  let key: string;
  const dir = tempDir();
  const paths: Record<string, string> = {};
  const usd = async () => {
    const response = await harness.app.inject({ url: '/v1/rates/usd_free?expand=sources', headers: { 'x-api-key': key } });
    return (json(response).rates as ExpandedRate[])[0]!;
  };

  before(async () => {
    const sources = fileSources(join(dir.path, 'feeds'), ['alpha', 'beta']);
    harness = await startHarness({ config: { sources, screening: { usd_free: { max_jump_percent: 10, confirm_seconds: 2 }, dollar: { confirm_seconds: 3 } } } });
    for (const source of sources) paths[source.name] = source.path!;
    ({ key } = await harness.keyFor('jump-board', 'enterprise', { overrides: { refresh_interval_seconds: 0 } }));
    await eventually(async () => (await usd()).value === 1_000_001, 4000);
  });
  after(async () => {
    await harness.close();
    dir.cleanup();
  });

  it('holds a single source’s jump and serves the next source meanwhile; a second source confirms it', async () => {
    writeSource(paths.alpha!, { [SAMPLE.usd_free]: 1_500_000 });
    const held = await eventually(async () => {
      const rate = await usd();
      return rate.sources[0]!.value === 1_500_000 ? rate : null;
    }, 4000);
    assert.deepEqual([held!.value, held!.source, held!.sources[0]!.rejected, held!.sources[0]!.used], [1_000_002, 'beta', 'held', false]);
    writeSource(paths.beta!, { [SAMPLE.usd_free]: 1_490_000 });
    const confirmed = await eventually(async () => {
      const rate = await usd();
      return rate.sources[1]!.value === 1_490_000 ? rate : null;
    }, 4000);
    assert.deepEqual([confirmed!.value, confirmed!.source, confirmed!.sources[0]!.rejected], [1_500_000, 'alpha', null]);
  });

  it('serves a lone jump once confirm_seconds have passed (the alias’s entry sets 3 s)', async () => {
    // beta no longer quotes the dollar: nothing can confirm alpha's next jump.
    writeSource(paths.beta!, { [SAMPLE.eur_free]: 1_200_002 });
    await eventually(async () => (await usd()).sources[1]!.value === null, 4000);
    writeSource(paths.alpha!, { [SAMPLE.usd_free]: 2_500_000 });
    const start = Date.now();
    const held = await eventually(async () => {
      const rate = await usd();
      return rate.sources[0]!.value === 2_500_000 ? rate : null;
    }, 4000);
    assert.deepEqual([held!.value, held!.status, held!.sources[0]!.rejected], [1_500_000, 'stale', 'held']);
    await eventually(async () => (await usd()).value === 2_500_000, 6000);
    const waited = Date.now() - start;
    assert.ok(waited >= 2500, `served after ${waited} ms, before the hold ended`);
  });
});
