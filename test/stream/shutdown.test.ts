/**
 * A real `nerkh serve` process with open streams: SIGTERM ends every stream
 * at once and the process exits promptly; streams never hold up the drain.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { eventually, tempDir } from '../support/env.js';
import { assertBuilt, startServer, type ServerProcess } from '../e2e/helpers.js';
import { openStream, type SseStream } from './sse-client.js';

describe('streams on shutdown', () => {
  const dir = tempDir();
  let server: ServerProcess | null = null;
  const streams: SseStream[] = [];
  after(async () => {
    for (const stream of streams) stream.close();
    if (server?.running) await server.kill();
    dir.cleanup();
  });

  it('SIGTERM closes every open stream at once and the process exits 0 well inside the drain limit', async (t) => {
    assertBuilt();
    server = await startServer({ NERKH_DATA_DIR: dir.path, NERKH_LOG_LEVEL: 'warn' });
    // The key is printed a few lines after "listening", which may arrive in a later chunk.
    const running = server;
    const key = await eventually(() => /\n\s+(nrk_[A-Za-z0-9]{32})\n/.exec(running.stdout)?.[1], 5_000).catch(() => undefined);
    assert.ok(key, `no demo key printed:\n${server.stdout}`);
    for (let i = 0; i < 3; i++) {
      const stream = await openStream(server.base, '/v1/stream', { 'x-api-key': key });
      assert.equal(stream.status, 200, stream.body);
      streams.push(stream);
    }
    await Promise.all(streams.map((stream) => stream.event(0)));
    // Open streams must not hold the drain to its limit (the server then says it gave up); how soon it ends is a bench figure.
    const { exit, ms } = await server.stop('SIGTERM');
    t.diagnostic(`exited ${ms} ms after SIGTERM`);
    assert.equal(exit?.code, 0, server.output());
    assert.match(server.stdout, /nerkh: stopped/, `the drain did not finish by itself:\n${server.output()}`);
    assert.doesNotMatch(server.stderr, /drain took too long/, server.output());
    assert.ok(streams.every((stream) => stream.ended), 'every stream ended');
  });
});

describe('a signal just after the start', () => {
  const dir = tempDir();
  after(() => dir.cleanup());

  it('SIGTERM the moment the listening line is out still drains and exits 0 (the signal is heard from before that line)', async () => {
    assertBuilt();
    const server = await startServer({ NERKH_DATA_DIR: dir.path, NERKH_LOG_LEVEL: 'warn' });
    try {
      const { exit } = await server.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null }, server.output());
      assert.match(server.stdout, /nerkh: SIGTERM received, draining/, server.output());
    } finally {
      await server.kill();
    }
  });
});
