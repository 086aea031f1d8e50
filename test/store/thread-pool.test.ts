import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { WorkerFailedError } from '../../src/store/errors.js';
import { ThreadPool } from '../../src/store/thread-pool.js';
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
      assert.ok((await first) instanceof WorkerFailedError);
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
});
