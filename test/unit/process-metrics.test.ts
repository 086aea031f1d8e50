import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { registerProcessMetrics } from '../../src/http/process-metrics.js';

const valueOf = (text: string, name: string) => Number(text.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1]);

describe('process metrics', () => {
  it('counts open descriptors without listing handles: the per-handle families are gone, the count is right beside 400 sockets', async () => {
    const registry = new Registry();
    registerProcessMetrics(registry, 'test_');
    let accepted = 0;
    const server = createServer(() => accepted++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 200; i++) sockets.push(connect(port, '127.0.0.1'));
      await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
      while (accepted < sockets.length) await new Promise((resolve) => setTimeout(resolve, 10));
      const text = await registry.metrics();
      for (const gone of ['test_nodejs_active_handles', 'test_nodejs_active_resources']) assert.ok(!text.includes(gone), `${gone} is still listed`);
      const counted = valueOf(text, 'test_process_open_fds');
      // Listing the directory opens one descriptor of its own.
      const listed = readdirSync('/proc/self/fd').length - 1;
      assert.ok(counted >= 400 && Math.abs(counted - listed) <= 2, `counted ${counted}, listed ${listed}`);
      for (const kept of ['test_process_resident_memory_bytes', 'test_nodejs_eventloop_lag_p99_seconds', 'test_process_max_fds']) assert.ok(Number.isFinite(valueOf(text, kept)), `${kept} missing`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
