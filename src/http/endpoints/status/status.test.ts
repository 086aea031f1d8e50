/**
 * /v1/status and the public /status page list the history (candle
 * recording) and the push stream with the other services: their state, how
 * long candles are kept, the newest candle written, the streams open.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { ZoneTime } from '../../../domain/time.js';
import { Buckets } from '../../../history/ranges/buckets.js';
import { HistoryReader } from '../../../history/history-reader.js';
import { API_SCHEMAS } from '../../../http/endpoints/registry.js';
import { StatusResponse } from './schema.js';
import { openStream, type SseStream } from '../../../../test/stream/sse-client.js';
import { eventually } from '../../../../test/support/env.js';
import { json, startHarness, type Harness } from '../../../../test/support/harness.js';

interface StatusBody {
  endpoints: { name: string; path: string; state: string }[];
  history: { state: string; minute_days: number; last_written: string | null; recording: boolean; pending_candles: number };
  stream: { state: string; open_streams: number };
}

describe('status of the history and the push stream', () => {
  let harness: Harness;
  let base: string;
  let key: string;
  const streams: SseStream[] = [];

  before(async () => {
    harness = await startHarness({ config: { history: { minuteDays: 30 } } });
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    key = (await harness.keyFor('status-watcher', 'enterprise')).key;
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await harness.close();
  });

  const status = async (): Promise<StatusBody> => {
    const response = await harness.app.inject({ url: '/v1/status', headers: { 'x-api-key': key } });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.ok(Value.Check(StatusResponse, API_SCHEMAS, body), JSON.stringify([...Value.Errors(StatusResponse, API_SCHEMAS, body)].slice(0, 3)));
    return body as unknown as StatusBody;
  };
  const page = async () => (await harness.app.inject({ url: '/status' })).body;

  it('lists both among the endpoints, with their paths and state', async () => {
    const { endpoints } = await status();
    assert.deepEqual(
      endpoints.filter((e) => e.name === 'history' || e.name === 'stream'),
      [
        { name: 'history', path: '/v1/rates/{key}/history', state: 'active' },
        { name: 'stream', path: '/v1/stream', state: 'active' },
      ],
    );
  });

  it('says how long candles are kept and when the newest was written, once the recorder has written it', async () => {
    const before = Date.now();
    await eventually(async () => (await status()).history.last_written !== null, 5000);
    const { history } = await status();
    assert.deepEqual([history.state, history.minute_days, history.recording], ['active', 30, true]);
    assert.ok(Number.isInteger(history.pending_candles) && history.pending_candles >= 0, `pending ${history.pending_candles}`);
    assert.match(history.last_written!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+03:30$/);
    // The newest close the store holds is what is reported (to the second).
    const stored = await harness.store.history.newestClose();
    assert.ok(stored !== null && Math.abs(Date.parse(history.last_written!) - stored) < 1000, `${history.last_written} vs ${stored}`);
    assert.ok(Date.parse(history.last_written!) <= Date.now() && Date.parse(history.last_written!) > before - 120_000, 'Date.parse(history.last_written!) <= Date.now() && Date.parse(history.last_written!) > before - 120_000');
    const html = await page();
    assert.match(html, /History \(candles\)/);
    assert.match(html, /One-minute candles 30 days; hourly and daily for good/);
    assert.match(html, /id="last-candle"[^>]*><span class="date">[۰-۹/: ]+<\/span><div class="en date">\d{4}-\d\d-\d\dT/, 'the last candle as a Jalali date, then ISO');
  });

  it('counts the push streams open on this node, on both', async () => {
    assert.equal((await status()).stream.open_streams, 0);
    for (let i = 0; i < 2; i++) {
      const stream = await openStream(base, '/v1/stream?keys=usd_free', { 'x-api-key': key });
      streams.push(stream);
      assert.equal(stream.status, 200, stream.body);
      await stream.event(0);
    }
    const { stream } = await status();
    assert.deepEqual(stream, { state: 'active', open_streams: 2 });
    assert.match(await page(), /Push stream[\s\S]*id="open-streams"[^>]*>۲<div class="en">2</);
    streams.pop()!.close();
    await eventually(async () => (await status()).stream.open_streams === 1, 3000);
  });

  it('on a node that does not record, reads the newest candle from the store', async () => {
    const reader = new HistoryReader(harness.store.history, new Buckets(new ZoneTime(harness.config.timezone)), harness.store.health, 30, null);
    const first = reader.recording(Date.now());
    assert.deepEqual({ ...first, lastWritten: null }, { minuteDays: 30, lastWritten: null, recording: false, pending: 0 });
    const read = await eventually(() => reader.recording(Date.now()).lastWritten, 3000);
    assert.equal(read, await harness.store.history.newestClose());
  });
});
