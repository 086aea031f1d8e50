/**
 * A file source reads only a regular file, at most max_bytes of it, within
 * its timeout: a FIFO, a device or a hung mount fails the poll with a reason
 * and never holds the source for good. Real files, real FIFOs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { systemClock } from '../../src/domain/clock.js';
import { FileSourceReader } from '../../src/sources/file.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { eventually, fileSources, readFailure, tempDir, writeSource } from '../support/env.js';
import { HANG_MS } from '../support/deadline.js';

const root = tempDir('nerkh-file-limits-');
let count = 0;
after(() => root.cleanup());

function folder(): string {
  const path = join(root.path, `t${count++}`);
  mkdirSync(path, { recursive: true });
  return path;
}

const mkfifo = (path: string) => execFileSync('mkfifo', [path]);

describe('file source limits', () => {
  const running: SourceMonitor[] = [];
  afterEach(() => {
    for (const monitor of running.splice(0)) monitor.stop();
  });

  it('refuses a FIFO at once, without opening it (no writer would ever come), and reads the file that replaces it', async () => {
    const path = join(folder(), 'feed.json');
    mkfifo(path);
    // A timeout far beyond any wait here: the FIFO is refused before a read, not by the timeout.
    const reader = new FileSourceReader(path, 1, systemClock, { timeoutMs: 10 * HANG_MS });
    const started = Date.now();
    assert.equal(await readFailure(reader), 'not a regular file (a FIFO, socket or device is never read)');
    assert.ok(Date.now() - started < HANG_MS, 'Date.now() - started < HANG_MS');
    rmSync(path);
    writeSource(path, { x: 5 });
    assert.equal((await reader.readIfChanged())?.items.get('x')?.raw, '5');
  });

  it('refuses a directory and a file over max_bytes, with the reason', async () => {
    const dir = folder();
    assert.equal(await readFailure(new FileSourceReader(dir, 1)), 'path is a directory');
    const big = join(dir, 'big.json');
    writeFileSync(big, `{"items":{"x":1},"pad":"${'x'.repeat(2048)}"}`);
    assert.equal(await readFailure(new FileSourceReader(big, 1, systemClock, { maxBytes: 1024 })), 'file larger than 1 KiB (max_bytes)');
    assert.equal((await new FileSourceReader(big, 1, systemClock, { maxBytes: 4096 }).readIfChanged())?.items.get('x')?.raw, '1');
  });

  it('a read stuck in the I/O pool (as behind a hung mount) fails the poll at its timeout, is not started again while stuck, and the next poll after it ends works', async () => {
    // Blocking opens of FIFOs without a writer take every thread of libuv's pool, as reads
    // from a hung mount would: the reader's own stat then waits behind them.
    const dir = folder();
    const path = join(dir, 'feed.json');
    writeSource(path, { x: 7 });
    const threads = Number(process.env.UV_THREADPOOL_SIZE || 4);
    const fifos = Array.from({ length: threads }, (_, i) => join(dir, `hang${i}`));
    fifos.forEach(mkfifo);
    const hung: Promise<FileHandle>[] = fifos.map((fifo) => open(fifo, 'r'));
    const reader = new FileSourceReader(path, 1, systemClock, { timeoutMs: 300 });
    try {
      const started = Date.now();
      assert.equal(await readFailure(reader), 'file read timed out after 0.3 s');
      assert.ok(Date.now() - started < HANG_MS, `timed out only after ${Date.now() - started} ms`);
      // Still stuck: refused at once, no second read queued behind the first.
      assert.equal(await readFailure(reader), 'file read stuck for more than 0.3 s, waiting for it to end (a hung mount?)');
    } finally {
      // A writer frees each blocked open (opened here on the main thread, so not queued behind them).
      for (const fifo of fifos) closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      for (const handle of await Promise.all(hung)) await handle.close();
    }
    const data = await eventually(() => reader.readIfChanged(), 3000);
    assert.equal(data?.items.get('x')?.raw, '7');
  });

  it('under a SourceMonitor: a path that becomes a FIFO degrades the source with the reason, keeping its data, and it is active again once the file is back', async () => {
    const [source] = fileSources(folder(), ['feed']);
    writeSource(source!.path!, { x: 1 });
    const monitor = new SourceMonitor([source!]);
    running.push(monitor);
    await monitor.start();
    const health = () => monitor.health(Date.now())[0]!;
    assert.equal(health().state, 'active');
    rmSync(source!.path!);
    mkfifo(source!.path!);
    await eventually(() => health().error === 'not a regular file (a FIFO, socket or device is never read)');
    assert.equal(health().state, 'degraded');
    assert.equal(monitor.views()[0]!.items.get('x')?.raw, '1');
    rmSync(source!.path!);
    writeSource(source!.path!, { x: 2 });
    await eventually(() => health().state === 'active' && monitor.views()[0]!.items.get('x')?.raw === '2');
    assert.equal(health().error, null);
  });
});
