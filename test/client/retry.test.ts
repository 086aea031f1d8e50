/**
 * Retry-After honoured by @nerkh/client, on the real app listening on
 * 127.0.0.1 with a clock the test moves: a limit window half a second from
 * its end answers 429 with `Retry-After: 1`, and the server's minute passes
 * when the client's fetch sees that answer, so the waited retry succeeds.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NerkhClient, NerkhError, parseRetryAfter } from '../../clients/typescript/src/index.js';
import { ManualClock } from '../../src/domain/clock.js';
import { startHarness, type Harness } from '../support/harness.js';

const MINUTE = 60_000;

describe('@nerkh/client honours Retry-After', () => {
  const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE);
  let harness: Harness;
  let base: string;
  let counter = 0;

  /** A key allowed two requests a minute, both spent half a second before the minute ends. */
  const spentKey = async () => {
    const { key } = await harness.keyFor(`retry-${++counter}`, 'enterprise', { overrides: { requests_per_minute: 2 } });
    clock.set(Math.floor(clock.now() / MINUTE) * MINUTE + MINUTE - 500);
    const plain = new NerkhClient({ baseUrl: base, apiKey: key, retries: 0 });
    await plain.rates('usd_free');
    await plain.rates('usd_free');
    return key;
  };

  before(async () => {
    harness = await startHarness({ runtime: { clock } });
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => harness.close());

  it('waits the seconds a 429 names, then retries and succeeds', async () => {
    const key = await spentKey();
    const statuses: number[] = [];
    const nerkh = new NerkhClient({
      baseUrl: base,
      apiKey: key,
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        if (response.status === 429) clock.advance(1000);
        return response;
      },
    });
    const started = Date.now();
    const { data, meta } = await nerkh.rates('usd_free');
    const waited = Date.now() - started;
    assert.deepEqual(statuses, [429, 200]);
    assert.equal(data.rates[0]!.key, 'usd_free');
    assert.ok(waited >= 1000, `waited ${waited} ms for Retry-After: 1`);
    assert.equal(meta.rateLimit?.remaining, 1, 'the retry is the first request of the new minute');
  });

  it('gives up after the configured retries with the last 429', async () => {
    const key = await spentKey();
    const statuses: number[] = [];
    const nerkh = new NerkhClient({
      baseUrl: base,
      apiKey: key,
      retries: 1,
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        return response;
      },
    });
    const started = Date.now();
    await assert.rejects(nerkh.rates('usd_free'), (error: NerkhError) => error instanceof NerkhError && error.status === 429 && error.retryAfter === 1);
    assert.deepEqual(statuses, [429, 429], 'one retry, after the server’s second');
    assert.ok(Date.now() - started >= 1000, 'Date.now() - started >= 1000');
  });

  it('a wait longer than maxRetryWaitMs is not slept: the error comes at once with its retryAfter', async () => {
    const { key } = await harness.keyFor(`retry-${++counter}`, 'enterprise', { overrides: { requests_per_minute: 1 } });
    clock.set(Math.floor(clock.now() / MINUTE) * MINUTE + MINUTE + 1000);
    const nerkh = new NerkhClient({ baseUrl: base, apiKey: key, maxRetryWaitMs: 5000 });
    await nerkh.rates('usd_free');
    const started = Date.now();
    await assert.rejects(nerkh.rates('usd_free'), (error: NerkhError) => error.status === 429 && error.retryAfter === 59);
    assert.ok(Date.now() - started < 500, `gave up after ${Date.now() - started} ms`);
  });

  it('an aborted wait rejects with the abort, not a NerkhError', async () => {
    const key = await spentKey();
    const nerkh = new NerkhClient({ baseUrl: base, apiKey: key });
    const controller = new AbortController();
    const call = nerkh.rates('usd_free', { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(call, (error: Error) => error.name === 'AbortError' && !(error instanceof NerkhError));
  });
});

describe('Retry-After as the client reads it', () => {
  it('takes delta-seconds or an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    assert.equal(parseRetryAfter('7', now), 7);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now), 30);
    assert.equal(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now), 0, 'a date in the past: retry now');
    assert.equal(parseRetryAfter('-5', now), null);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(null, now), null);
  });
});
