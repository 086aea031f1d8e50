/**
 * What the clock decides, tested on a clock the test moves: refresh tiers,
 * limit windows, staleness and key expiry, with no waiting for real time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { eventually, writeSource } from '../support/env.js';
import { json, SAMPLE, startHarness, type Harness } from '../support/harness.js';

const MINUTE = 60_000;

describe('on an injected clock', () => {
  // A second into a minute, so every tier's boundary is known.
  const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE + 1000);
  let harness: Harness;
  let live: string;
  let slow: string;

  before(async () => {
    harness = await startHarness({ runtime: { clock } });
    live = (await harness.keyFor('live-board', 'enterprise')).key;
    slow = (await harness.keyFor('slow-board', 'basic')).key;
  });
  after(() => harness.close());

  const usd = async (key: string) => {
    const response = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    return { rate: (json(response).rates as { value: number; status: string; stale_seconds?: number }[])[0]!, cacheControl: response.headers['cache-control'] };
  };

  it('a 60 s plan sees a change only from its next boundary; a 1 s plan at once', async () => {
    const before = (await usd(slow)).rate.value;
    writeSource(harness.config.sources[0]!.path!, { [SAMPLE.usd_free]: 1_234_567 }, new Date(clock.now()));
    await eventually(async () => (await usd(live)).rate.value === 1_234_567, 3000);
    const seen = await usd(slow);
    assert.equal(seen.rate.value, before, 'the 60 s tier still shows the snapshot as of its boundary');
    assert.equal(seen.cacheControl, 'private, max-age=59');
    clock.advance(MINUTE);
    assert.equal((await usd(slow)).rate.value, 1_234_567, 'from the next boundary on');
  });

  it('a minute window resets at the minute, not after sixty seconds of waiting', async () => {
    const { key } = await harness.keyFor('three-a-minute', 'enterprise', { overrides: { requests_per_minute: 3 } });
    const get = () => harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
    for (let i = 0; i < 3; i++) assert.equal((await get()).statusCode, 200);
    const refused = await get();
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], String(Math.ceil((MINUTE - (clock.now() % MINUTE)) / 1000)));
    clock.set(Math.floor(clock.now() / MINUTE) * MINUTE + MINUTE);
    assert.equal((await get()).statusCode, 200, 'a new minute, a new window');
  });

  it('a value turns stale when the clock passes its max age, with its age in seconds', async () => {
    writeSource(harness.config.sources[0]!.path!, { [SAMPLE.usd_free]: 1_111_111 }, new Date(clock.now()));
    writeSource(harness.config.sources[1]!.path!, { [SAMPLE.usd_free]: 1_111_112 }, new Date(clock.now()));
    await eventually(async () => (await usd(live)).rate.value === 1_111_111, 3000);
    assert.equal((await usd(live)).rate.status, 'ok');
    const maxAge = harness.config.sources[0]!.max_age_seconds;
    clock.advance((maxAge + 7) * 1000);
    // The engine's own tick (once a real second) notices what the clock did.
    const stale = await eventually(async () => {
      const { rate } = await usd(live);
      return rate.status === 'stale' ? rate : null;
    }, 3000);
    assert.equal(stale!.stale_seconds, maxAge + 7);
  });

  it('an expiring key works until its moment and not after', async () => {
    const account = await harness.store.accounts.create('expiring', 'enterprise');
    const issued = await harness.store.keys.issue(account.id, { expiresAt: clock.now() + MINUTE });
    await eventually(async () => {
      await harness.runtime.directory!.poll();
      return (await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': issued.key } })).statusCode === 200;
    }, 3000);
    clock.advance(MINUTE);
    const response = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': issued.key } });
    assert.equal(response.statusCode, 401);
    assert.equal(json(response).error, 'API_KEY_INVALID');
  });
});
