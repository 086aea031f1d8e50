/**
 * GET /v1/stream over real HTTP on an in-process service whose clock the test
 * moves: first snapshot, changed-only events on the tier's boundaries, resume,
 * keys in header and query, the stream cap and metering.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { ManualClock } from '../../../domain/clock.js';
import { eventually, writeSource } from '../../../../test/support/env.js';
import { json, SAMPLE, SAMPLE_VALUES, startHarness, type Harness } from '../../../../test/support/harness.js';
import { openStream, ratesOf, type SseStream } from '../../../../test/stream/sse-client.js';

const MINUTE = 60_000;

describe('GET /v1/stream', () => {
  // A second into a minute: a 6 s tier's boundaries fall at +6 s, +12 s, …
  const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE + 1000);
  const logLines: string[] = [];
  const open: SseStream[] = [];
  let harness: Harness;
  let base: string;
  let live: string;
  let sixSeconds: string;

  const connect = async (path: string, headers: Record<string, string> = {}) => {
    const stream = await openStream(base, path, headers);
    open.push(stream);
    return stream;
  };
  // The euro keeps one value and one time, so only the dollar changes.
  const euro = { value: SAMPLE_VALUES.eur_free + 1, updated_at: new Date(clock.now()).toISOString() };
  const writeBoth = (usd: number) => {
    for (const source of harness.config.sources) writeSource(source.path!, { [SAMPLE.usd_free]: usd, [SAMPLE.eur_free]: euro }, new Date(clock.now()));
  };
  const detailUsd = async (key: string) => {
    const response = await harness.app.inject({ url: '/v1/rates/usd_free', headers: { 'x-api-key': key } });
    return (json(response).rates as { value: number }[])[0]!.value;
  };

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    harness = await startHarness({ runtime: { clock, logger: pino({ level: 'info' }, sink) } });
    live = (await harness.keyFor('live-board', 'enterprise')).key;
    sixSeconds = (await harness.keyFor('six-second-board', 'enterprise', { overrides: { refresh_interval_seconds: 6 } })).key;
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    for (const stream of open) stream.close();
    await harness.close();
  });

  it('starts with retry and a snapshot of every requested key, in request order', async () => {
    const stream = await connect('/v1/stream?keys=eur_free,usd_free,usd', { 'x-api-key': live });
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    const first = await stream.event(0);
    assert.equal(first.event, 'snapshot');
    assert.equal(stream.retry, 3000);
    const body = ratesOf(first);
    assert.deepEqual(body.rates.map((rate) => rate.key), ['eur_free', 'usd_free'], 'aliases resolve, each reference once');
    assert.match(body.generated_at, /\+03:30$/);
    assert.ok(Number(first.id) > 0, 'id is the snapshot version');
  });

  it('first says which requested names it leaves out (unknown, outside the plan), once, to that stream alone', async () => {
    const { key } = await harness.keyFor('two-rate-board', 'enterprise', { references: ['usd_free', 'coin_emami'] });
    const stream = await connect('/v1/stream?keys=usd_free,nope,EUR,gold_18k,Nope,usd,eur_free', { 'x-api-key': key });
    assert.equal(stream.status, 200);
    const meta = await stream.event(0);
    assert.equal(meta.event, 'meta');
    assert.equal(meta.id, undefined, 'no id: Last-Event-ID stays the snapshot version');
    assert.deepEqual(JSON.parse(meta.data), { unknown_keys: ['nope'], denied_keys: ['eur', 'gold_18k'] });
    const snapshot = await stream.event(1);
    assert.equal(snapshot.event, 'snapshot');
    assert.deepEqual(ratesOf(snapshot).rates.map((rate) => rate.key), ['usd_free']);

    // A stream following the same references that dropped nothing shares the snapshot, without the meta.
    const clean = await connect('/v1/stream?keys=usd_free', { 'x-api-key': key });
    assert.equal((await clean.event(0)).event, 'snapshot');
  });

  it('sends only the rates that changed, on the 6 s tier only from its next boundary', async () => {
    const fast = await connect('/v1/stream?keys=usd_free,eur_free', { 'x-api-key': live });
    const slow = await connect('/v1/stream?keys=usd_free,eur_free', { 'x-api-key': sixSeconds });
    await fast.event(0);
    await slow.event(0);
    writeBoth(1_111_111);
    // Settled once both sources are read: the second may be read first and its value served meanwhile (from it), then the first's.
    let index = 1;
    let settled = await fast.event(index);
    while (ratesOf(settled).rates.find((rate) => rate.key === 'usd_free')?.source !== harness.config.sources[0]!.name) settled = await fast.event(++index);
    writeBoth(1_234_567);
    const change = await fast.event(index + 1);
    assert.equal(change.event, 'rates');
    assert.deepEqual(ratesOf(change).rates.map((rate) => [rate.key, rate.value]), [['usd_free', 1_234_567]], 'only the changed rate');
    assert.ok(Number(change.id) > Number(settled.id), 'Number(change.id) > Number(settled.id)');

    // A window, not a wait: on the manual clock the 6 s tier has no later event before its boundary to check
    // against, and a later write would change what that boundary sends.
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(slow.events.length, 1, 'the 6 s tier sees nothing before its boundary');
    assert.notEqual(await detailUsd(sixSeconds), 1_234_567, 'and neither does its detail endpoint');

    clock.advance(5000);
    const slowChange = await slow.event(1);
    assert.equal(slowChange.event, 'rates');
    assert.deepEqual(ratesOf(slowChange).rates.find((rate) => rate.key === 'usd_free')?.value, 1_234_567);
    assert.equal(await detailUsd(sixSeconds), 1_234_567, 'the same boundary as the detail endpoint');
    assert.equal(slow.events.length, 2, 'one event per boundary');
  });

  it('answers a reconnect with Last-Event-ID with a fresh snapshot', async () => {
    const first = await connect('/v1/stream?keys=usd_free', { 'x-api-key': live });
    const seen = await first.event(0);
    first.close();
    const again = await connect('/v1/stream?keys=usd_free', { 'x-api-key': live, 'last-event-id': seen.id! });
    const resumed = await again.event(0);
    assert.equal(resumed.event, 'snapshot');
    assert.equal(ratesOf(resumed).rates[0]!.value, await detailUsd(live));
  });

  it('takes the key from ?api_key= and never logs it', async () => {
    const { key } = await harness.keyFor('browser-board', 'pro');
    const stream = await connect(`/v1/stream?keys=usd_free&api_key=${key}`);
    assert.equal(stream.status, 200);
    assert.equal((await stream.event(0)).event, 'snapshot');
    const refused = await connect(`/v1/stream?keys=usd_free&api_key=${key}x`);
    assert.equal(refused.status, 401);
    assert.doesNotMatch(refused.body, new RegExp(key));
    stream.close();
    await eventually(() => logLines.some((line) => line.includes('stream opened') && line.includes('/v1/stream?keys=usd_free&api_key=[redacted]')), 3000);
    await eventually(() => logLines.some((line) => line.includes('"status":401') && line.includes('api_key=[redacted]')), 3000);
    assert.ok(!logLines.some((line) => line.includes(key)), 'the query key is in no log line');
    const metrics = await harness.app.inject({ url: '/metrics' });
    assert.doesNotMatch(metrics.body, new RegExp(key));
    assert.match(metrics.body, /^nerkh_streams_open [1-9]\d*$/m);
    assert.match(metrics.body, /^nerkh_stream_events_sent_total [1-9]\d*$/m);
    assert.match(metrics.body, /^nerkh_stream_fanouts_total [1-9]\d*$/m, 'the change events above were fanned out');
    assert.match(metrics.body, /^nerkh_stream_fanout_seconds_total \d/m);
    assert.match(metrics.body, /^nerkh_stream_fanout_max_seconds \d/m);
    assert.match((await harness.app.inject({ url: '/status' })).body, /id="open-streams"[^>]*>[۰-۹]+<div class="en">[1-9]\d*</);
  });

  it('refuses a bad parameter, too many keys, and a plan without the service', async () => {
    assert.equal((await connect('/v1/stream?kyes=usd_free', { 'x-api-key': live })).status, 400);
    const many = Array.from({ length: 101 }, (_, i) => `k${i}`).join(',');
    const tooMany = await connect(`/v1/stream?keys=${many}`, { 'x-api-key': live });
    assert.equal(tooMany.status, 400);
    assert.equal(JSON.parse(tooMany.body).error, 'RATE_KEYS_LIMIT_EXCEEDED');
    const basic = (await harness.keyFor('basic-board', 'basic')).key;
    const refused = await connect('/v1/stream', { 'x-api-key': basic });
    assert.equal(refused.status, 403);
    assert.equal(JSON.parse(refused.body).error, 'SERVICE_NOT_ACTIVE');
  });

  it('caps open streams per account at max_streams, counts each opening once, and frees a slot on close', async () => {
    const { key } = await harness.keyFor('capped-board', 'pro', { overrides: { max_streams: 2 } });
    const a = await connect('/v1/stream?keys=usd_free', { 'x-api-key': key });
    const b = await connect('/v1/stream', { 'x-api-key': key });
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    const c = await connect('/v1/stream', { 'x-api-key': key });
    assert.equal(c.status, 429);
    assert.equal(JSON.parse(c.body).error, 'TOO_MANY_STREAMS');
    a.close();
    let attempts = 0;
    await eventually(async () => {
      attempts++;
      return (await connect('/v1/stream', { 'x-api-key': key })).status === 200;
    }, 3000);
    // The server has seen the close once its count of open streams drops: any usage a close counted is in by then.
    const openStreams = async () => Number(/^nerkh_streams_open (\d+)$/m.exec((await harness.app.inject({ url: '/metrics' })).body)?.[1] ?? NaN);
    const openBefore = await openStreams();
    b.close();
    await eventually(async () => (await openStreams()) < openBefore, 5000, 10);
    const usage = await harness.app.inject({ url: '/v1/usage', headers: { 'x-api-key': key } });
    const stream = (json(usage).services as { service: string; requests: number }[]).find((entry) => entry.service === 'stream');
    assert.ok(stream, JSON.stringify(json(usage)));
    assert.equal(stream.requests, 3 + attempts, 'each opening once, the refused one included, none at close');
  });
});
