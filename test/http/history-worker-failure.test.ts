import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { StoredCandle } from '../../src/domain/candle.js';
import { dialects, json, startHarness, type Harness } from '../support/harness.js';

const M = 60_000;
/** A reference no test source feeds, so only the seeded history speaks for it. */
const SEEDED = 'gbp_free';
/** Two days of minute candles up to now. */
const CANDLES = 2_880;

for (const dialect of dialects()) {
  describe(`a history worker that fails mid-answer (${dialect.name})`, dialect.options, () => {
    let harness: Harness;
    let key: string;
    const now = Math.floor(Date.now() / M) * M;
    const get = (url: string) => harness.app.inject({ url, headers: { 'x-api-key': key, 'accept-encoding': 'gzip' } });
    /** 1,000 minute candles ending `back` minutes ago: a range no answer has read yet when `back` is new. */
    const range = (back: number) => `/v1/rates/${SEEDED}/history?interval=1m&from=${new Date(now - (back + 1000) * M).toISOString()}&to=${new Date(now - back * M - 1).toISOString()}`;

    before(async () => {
      harness = await startHarness({ databaseUrl: dialect.databaseUrl });
      ({ key } = await harness.keyFor('charts', 'enterprise'));
      const rows: StoredCandle[] = [];
      for (let i = 0; i < CANDLES; i++) {
        const start = now - (CANDLES - i) * M;
        rows.push({ grain: 'minute', reference: SEEDED, candle: { start, open: '1', high: '2', low: '1', close: String(i), points: 1, source: 'alpha', closeAt: start + 1000 } });
      }
      await harness.store.history.write(rows);
    });
    after(() => harness.close());

    it('answers 503 in the error envelope, leaves the store reachable, and the next answer comes from a new worker', async () => {
      assert.equal((await get(range(1500))).statusCode, 200, 'the pool answers before any failure');
      const answers = harness.app.historyAnswers;
      let failed = null;
      // The worker is stopped while it renders: the answer it owed fails. A render can finish before the stop lands, so a few tries.
      for (let attempt = 0; attempt < 40 && failed === null; attempt++) {
        const pending = get(range(attempt * 3));
        const waitedUntil = Date.now() + 2_000;
        while (answers.workers.rendering === 0 && Date.now() < waitedUntil) await new Promise((resolve) => setImmediate(resolve));
        await Promise.all(answers.workers.threads.map((thread) => thread.terminate()));
        const response = await pending;
        if (response.statusCode === 503) failed = response;
        else assert.equal(response.statusCode, 200, response.body);
      }
      assert.ok(failed, 'no answer was cut short by the stopped worker');
      const body = json(failed);
      assert.equal(body.success, false);
      assert.equal(body.error, 'SERVICE_UNAVAILABLE');
      assert.match(String(body.message), /worker thread serving it failed/);
      assert.equal(failed.headers['retry-after'], '1');
      assert.equal(failed.headers['cache-control'], 'no-store');
      // A worker's failure says nothing of the store: it is still taken as reachable.
      assert.equal(harness.store.health.reachable, true);
      const next = await get(range(100));
      assert.equal(next.statusCode, 200, next.body);
      assert.equal(next.headers['content-encoding'], 'gzip');
      assert.equal((JSON.parse(gunzipSync(next.rawPayload).toString()) as { count: number }).count, 1000);
      // Current rates never needed the pool.
      assert.equal((await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } })).statusCode, 200);
    });
  });
}
