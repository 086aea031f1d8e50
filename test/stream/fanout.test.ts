/**
 * One event to thousands of streams is written in slices, with the event loop
 * free between them: a timer set as a fan-out starts fires before it ends,
 * over real loopback connections. And slicing keeps every stream's events
 * whole and in order: snapshots arriving mid fan-out, streams opening,
 * closing and moving mid fan-out, each stream a real node:stream Writable.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { RefreshTiers } from '../../src/live/refresh-tiers.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { StreamHub, type Selection } from '../../src/stream/hub.js';
import type { Subscriber } from '../../src/stream/sink.js';
import { eventually } from '../support/env.js';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
const time = new ZoneTime('Asia/Tehran', clock);
const KEYS = ['usd_free', 'eur_free', 'gold_18k'];
const ALL: Selection = { intervalSeconds: 0, keys: KEYS, tag: 'all', unit: 'rial' };
const EURO: Selection = { intervalSeconds: 0, keys: ['eur_free'], tag: 'eur_free', unit: 'rial' };

function snapshot(version: number, values: Record<string, number>, pad = ''): Snapshot {
  const rates = new Map<string, PreparedRate>();
  for (const [key, value] of Object.entries(values)) {
    const rate = { key, value } as unknown as PreparedRate['rate'];
    const prepared: PreparedRate = { rate, json: JSON.stringify({ key, value, pad }), webservice: '', hash: value, toman: () => prepared };
    rates.set(key, prepared);
  }
  return { version, builtAt: clock.now(), rates, lastUpdate: null, counts: { ok: rates.size, stale: 0, unavailable: 0 } };
}

interface Received {
  event: string;
  id: number;
  rates: Record<string, number>;
}

/** A stream's client end, in process: a node:stream Writable that parses each frame the hub writes (one frame per write). */
function reader(): { sink: Writable; events: Received[] } {
  const events: Received[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString();
      if (!text.startsWith('event: ')) return done();
      const [eventLine, idLine, dataLine] = text.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length)) as { rates: { key: string; value: number }[] };
      events.push({ event: eventLine!.slice(7), id: Number(idLine!.slice(4)), rates: Object.fromEntries(data.rates.map((rate) => [rate.key, rate.value])) });
      done();
    },
  });
  return { sink, events };
}

/** Every stream's view must match the state it was last brought to: its snapshot, then each event's changes, in id order. */
function replay(events: Received[]): { ids: number[]; state: Record<string, number> } {
  const state: Record<string, number> = {};
  const ids: number[] = [];
  for (const event of events) {
    if (event.event === 'snapshot') for (const key of Object.keys(state)) delete state[key];
    Object.assign(state, event.rates);
    ids.push(event.id);
  }
  return { ids, state };
}

const increasing = (ids: number[]) => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

describe('stream fan-out in slices', () => {
  const cleanup: (() => void)[] = [];
  after(() => cleanup.forEach((undo) => undo()));

  it('a timer set as one event goes to 3,000 loopback streams fires before the last is written, on the default budget', async () => {
    const needed = 3_000 * 2 + 200;
    const limit = Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
    assert.ok(limit >= needed, `this test holds 3,000 loopback connections (both ends): it needs ${needed} open files, the limit is ${limit} (ulimit -n)`);
    const history = new RefreshTiers(snapshot(1, { usd_free: 1 }), 60);
    const hub = new StreamHub(history, time);
    const server: Server = createServer((socket) => {
      socket.on('error', () => {});
      hub.open(socket, { intervalSeconds: 0, keys: ['usd_free'], tag: 'usd_free', unit: 'rial' }, () => {});
    });
    await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
    const port = (server.address() as { port: number }).port;
    const clients: Socket[] = [];
    const got = new Set<Socket>();
    cleanup.push(() => (clients.forEach((client) => client.destroy()), server.close(), hub.stop()));
    for (let i = 0; i < 3_000; i++) {
      const client = connect(port, '127.0.0.1');
      client.on('error', () => {});
      client.on('data', (chunk) => chunk.includes('event: rates') && got.add(client));
      clients.push(client);
    }
    await eventually(() => hub.counts().open === 3_000, 20_000);

    const before = hub.counts();
    let seenByTimer: { fanouts: number; slices: number } | null = null;
    // Due in 1 ms: it fires at the first turn of the loop after that, which only a yielding fan-out leaves room for.
    setTimeout(() => (seenByTimer = { fanouts: hub.counts().fanouts.count, slices: hub.counts().slices.count }), 0);
    // A 4 KB rate, so each write is a real copy into the socket.
    history.push(snapshot(2, { usd_free: 2 }, 'x'.repeat(4096)));
    await eventually(() => hub.counts().fanouts.count === before.fanouts.count + 1, 20_000);
    assert.ok(seenByTimer, 'the timer fired');
    const seen = seenByTimer as { fanouts: number; slices: number };
    assert.equal(seen.fanouts, before.fanouts.count, 'the timer fired while the event was still being written');
    assert.ok(seen.slices > before.slices.count, 'after at least one slice');
    assert.ok(hub.counts().slices.count - before.slices.count >= 2, 'the fan-out took several turns of the loop');
    await eventually(() => got.size === 3_000, 20_000);
  });

  it('keeps every stream whole and in order through snapshots, opens, closes and moves mid fan-out', async () => {
    const history = new RefreshTiers(snapshot(1, { usd_free: 100, eur_free: 200, gold_18k: 300 }), 60);
    // 256 streams a slice: the fan-out spans a dozen turns whatever the machine's speed.
    const hub = new StreamHub(history, time, { slice: { streams: 256 } });
    cleanup.push(() => hub.stop());
    const streams: { sink: Writable; events: Received[]; subscriber: Subscriber; closed: boolean }[] = [];
    const open = (selection: Selection) => {
      const { sink, events } = reader();
      const stream = { sink, events, subscriber: null as unknown as Subscriber, closed: false };
      stream.subscriber = hub.open(sink, selection, () => (stream.closed = true));
      streams.push(stream);
      return stream;
    };
    for (let i = 0; i < 3_000; i++) open(ALL);
    const moved = streams.slice(2_900, 2_950);
    const closing = streams.slice(2_950);

    let midway: { written: number } | null = null;
    const latecomers: ReturnType<typeof open>[] = [];
    // At the fan-out's first yield: a stream that has it and one that has not yet; half the tail moves to the euro, the rest closes; newcomers join.
    setImmediate(() => {
      midway = { written: streams.filter((stream) => stream.events.length === 2).length };
      for (const stream of moved) hub.reselect(stream.subscriber, EURO);
      for (const stream of closing) stream.sink.destroy();
      for (let i = 0; i < 100; i++) latecomers.push(open(ALL));
      // Two more changes while the first is still being written: each to another rate.
      history.push(snapshot(3, { usd_free: 101, eur_free: 200, gold_18k: 301 }));
      history.push(snapshot(4, { usd_free: 101, eur_free: 201, gold_18k: 301 }));
    });
    history.push(snapshot(2, { usd_free: 100, eur_free: 200, gold_18k: 301 }));
    await eventually(() => hub.counts().fanouts.count >= 2 && streams.every((stream) => stream.closed || replay(stream.events).state.eur_free === 201), 10_000);
    history.push(snapshot(5, { usd_free: 102, eur_free: 202, gold_18k: 302 }));
    await eventually(() => streams.every((stream) => stream.closed || stream.events.at(-1)!.id === 5), 10_000);

    assert.ok(midway, 'the fan-out yielded');
    const { written } = midway as { written: number };
    assert.ok(written > 0 && written < 3_000, `at the first yield ${written} of 3,000 streams had the event: it was written in slices`);
    const final = { usd_free: 102, eur_free: 202, gold_18k: 302 };
    for (const [i, stream] of streams.entries()) {
      const { ids, state } = replay(stream.events);
      assert.equal(stream.events[0]!.event, 'snapshot', `stream ${i} starts with a snapshot`);
      assert.ok(increasing(ids), `stream ${i}: ids in order, none twice: ${ids.join(',')}`);
      if (closing.includes(stream)) {
        assert.ok(stream.closed, 'stream.closed');
        continue;
      }
      if (moved.includes(stream)) {
        assert.deepEqual(state, { eur_free: 202 }, `moved stream ${i} follows the euro only`);
        const lastSnapshot = stream.events.map((event) => event.event).lastIndexOf('snapshot');
        const afterMove = stream.events.slice(lastSnapshot);
        assert.ok(afterMove.every((event) => Object.keys(event.rates).every((key) => key === 'eur_free')), `moved stream ${i} got nothing of its old group after its new snapshot`);
        continue;
      }
      assert.deepEqual(state, final, `stream ${i} holds every change`);
      if (!latecomers.includes(stream)) {
        // The first change (gold, id 2) went to every stream that was there; the two that came while it was
        // written left as one event after it, holding both.
        assert.deepEqual(ids, [1, 2, 4, 5], `stream ${i}`);
        assert.deepEqual(stream.events[1]!.rates, { gold_18k: 301 });
        assert.deepEqual(stream.events[2]!.rates, { usd_free: 101, eur_free: 201 });
      } else {
        // Its snapshot is the state being written (id 2), so that event is not written to it again (the ids above rise).
        assert.equal(stream.events[0]!.id, 2, `latecomer ${i} starts from the state being written`);
      }
    }
    assert.equal(hub.counts().open, 3_000 - closing.length + latecomers.length);
  });

  it('ends every stream at once on stop, a fan-out in progress or not', async () => {
    const history = new RefreshTiers(snapshot(1, { usd_free: 1 }), 60);
    const hub = new StreamHub(history, time, { slice: { streams: 64 } });
    const readers = Array.from({ length: 1_000 }, () => reader());
    for (const { sink } of readers) hub.open(sink, ALL, () => {});
    history.push(snapshot(2, { usd_free: 2 }));
    assert.ok(readers.some(({ events }) => events.length === 1), 'a fan-out is in progress');
    hub.stop();
    assert.equal(hub.counts().open, 0);
    assert.ok(readers.every(({ sink }) => sink.writableEnded), 'every stream ended in the same turn');
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(readers.every(({ events }) => events.length <= 2), 'and nothing is written after');
  });
});
