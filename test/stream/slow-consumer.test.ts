/**
 * A subscriber that stops reading is dropped, over a real TCP socket: by its
 * buffered bytes, or by a buffer that stays full past the stall time. A
 * subscriber that reads keeps its stream meanwhile.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import { RefreshTiers } from '../../src/live/refresh-tiers.js';
import type { PreparedRate, Snapshot } from '../../src/live/snapshot.js';
import { StreamHub, type StreamOptions } from '../../src/stream/hub.js';
import { eventually } from '../support/env.js';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
const time = new ZoneTime('Asia/Tehran', clock);
/** Each rate ~64 KB, so a few dozen events fill any socket buffer. */
const PAD = 'x'.repeat(64 * 1024);

function snapshot(version: number): Snapshot {
  const rate = { key: 'usd_free', value: version } as unknown as PreparedRate['rate'];
  const prepared: PreparedRate = { rate, json: JSON.stringify({ key: 'usd_free', value: version, pad: PAD }), webservice: '', hash: version, toman: () => prepared };
  return { version, builtAt: clock.now(), rates: new Map([['usd_free', prepared]]), lastUpdate: null, counts: { ok: 1, stale: 0, unavailable: 0 } };
}

async function run(options: Partial<StreamOptions>) {
  const history = new RefreshTiers(snapshot(1), 60);
  const hub = new StreamHub(history, time, { tickMs: 20, ...options });
  const server: Server = createServer((socket) => (socket.on('error', () => {}), hub.open(socket, { intervalSeconds: 0, keys: ['usd_free'], tag: 'usd_free', unit: 'rial' }, () => {})));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const stalled: Socket = connect(port, '127.0.0.1');
  stalled.pause();
  stalled.on('error', () => {});
  const reader: Socket = connect(port, '127.0.0.1');
  reader.on('error', () => {});
  let read = 0;
  reader.on('data', (chunk) => (read += chunk.length));
  await eventually(() => hub.counts().open === 2, 3000);
  let version = 1;
  // Bounded: at most 400 events of 64 KB.
  await eventually(() => {
    if (version < 400) history.push(snapshot(++version));
    return hub.counts().open === 1;
  }, 8000, 10);
  return { hub, server, stalled, reader, read: () => read };
}

describe('slow stream subscribers', () => {
  const cleanup: (() => void)[] = [];
  after(() => cleanup.forEach((undo) => undo()));

  it('drops a subscriber holding more unsent bytes than the bound, and only that one', async () => {
    const { hub, server, stalled, reader, read } = await run({ maxBufferedBytes: 512 * 1024, stallMs: 60_000 });
    cleanup.push(() => (stalled.destroy(), reader.destroy(), server.close(), hub.stop()));
    assert.equal(hub.counts().dropped.buffer, 1);
    assert.equal(hub.counts().open, 1, 'the reading subscriber stays');
    assert.ok(read() > 1024 * 1024, 'and keeps receiving');
  });

  it('drops a subscriber whose buffer stays full past the stall time', async () => {
    const { hub, server, stalled, reader } = await run({ maxBufferedBytes: 1 << 30, stallMs: 300 });
    cleanup.push(() => (stalled.destroy(), reader.destroy(), server.close(), hub.stop()));
    assert.equal(hub.counts().dropped.stalled, 1);
    assert.equal(hub.counts().dropped.buffer, 0);
  });
});
