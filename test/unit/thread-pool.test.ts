import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { ThreadPool, WorkerFailedError } from '../../src/threads/pool.js';
import { eventually, tempDir } from '../support/env.js';

describe('ThreadPool', () => {
  const dir = tempDir('nerkh-thread-pool-');
  after(() => dir.cleanup());

  it('keeps the process alive when its threads cannot start, and says so once', async () => {
    const broken = join(dir.path, 'broken.mjs');
    writeFileSync(broken, 'throw new Error("this thread cannot start");\n');
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    const pool = new ThreadPool(broken);
    try {
      // Unheard, piscina's 'error' event for a thread failing outside a task ends the process.
      // The first task starts the pool; it waits for a thread that never comes until the pool closes.
      const first = pool.run(1).catch((error: unknown) => error);
      await eventually(() => pool.outsideTasks.count > 0, 10_000);
      assert.match(pool.outsideTasks.first!.message, /this thread cannot start/);
      await eventually(() => warnings.length > 0, 2000);
      assert.equal(warnings.filter((message) => message.includes('failed outside a task')).length, 1);
      // A task is refused at once rather than left waiting for a thread that never starts.
      await eventually(() => pool.threads.length === 0, 10_000);
      await assert.rejects(pool.run(1), WorkerFailedError);
      await pool.close();
      assert.ok((await first) instanceof WorkerFailedError, '(await first) instanceof WorkerFailedError');
    } finally {
      process.off('warning', onWarning);
      await pool.close();
    }
  });

  it('runs tasks in its threads', async () => {
    const double = join(dir.path, 'double.mjs');
    writeFileSync(double, 'export default (n) => n * 2;\n');
    const pool = new ThreadPool(double);
    try {
      assert.equal(await pool.run(21), 42);
    } finally {
      await pool.close();
    }
  });

  it('lets a thread holding sockets run its timers between tasks (a connection idle past its timeout closes)', async () => {
    const ticking = join(dir.path, 'ticking.mjs');
    // The count goes up only while the thread's event loop turns between tasks; it is never asked to turn within one.
    writeFileSync(ticking, 'let ticks = 0;\nsetInterval(() => ticks++, 20);\nexport default () => ticks;\n');
    const pool = new ThreadPool(ticking, { maxThreads: 1, holdsSockets: true });
    try {
      const first = (await pool.run(null)) as number;
      await eventually(async () => ((await pool.run(null)) as number) > first);
    } finally {
      await pool.close();
    }
  });

  it('runs a named export once on each of its threads, a busy one included', async () => {
    // The worker imports the pool module as this file runs: TypeScript through tsx, or the suite's compiled copy.
    const worker = join(dir.path, 'each.mjs');
    const marks = join(dir.path, 'marks.txt');
    writeFileSync(marks, '');
    writeFileSync(
      worker,
      `import { appendFileSync } from 'node:fs';\n` +
        `import { threadId } from 'node:worker_threads';\n` +
        `import { allThreadsArrived } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, `../../src/threads/pool.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`)).href)};\n` +
        `export default async (ms) => { await new Promise((resolve) => setTimeout(resolve, ms)); return threadId; };\n` +
        `export async function mark(task) { appendFileSync(${JSON.stringify(marks)}, threadId + '\\n'); await allThreadsArrived(task); }\n`,
    );
    const pool = new ThreadPool(worker, { maxThreads: 3 });
    try {
      // Three slow tasks at once: the pool grows to three threads.
      const started = new Set(await Promise.all([pool.run(300), pool.run(300), pool.run(300)]));
      assert.equal(started.size, 3);
      assert.equal(pool.threads.length, 3);
      // One thread still busy when they are asked: the other two must not take its run as well as their own.
      const busy = pool.run(400);
      await pool.runOnEachThread('mark');
      await busy;
      const marked = readFileSync(marks, 'utf8').trim().split('\n').map(Number);
      assert.deepEqual(marked.sort(), [...started].sort());
    } finally {
      await pool.close();
    }
  });
});
