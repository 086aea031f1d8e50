/**
 * `nerkh serve` on a port another process holds: one line naming the address and what to do,
 * exit 2, and no "database error" (a listen failure carries an errno code as database failures do).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { tempDir } from '../support/env.js';
import { assertBuilt, cleanEnv, runCli } from './helpers.js';

assertBuilt();

describe('serve on a port in use', () => {
  it('says which address and why in one line, and exits 2', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    const dir = tempDir('nerkh-listen-');
    try {
      const result = await runCli(cleanEnv({ NERKH_DATA_DIR: dir.path, NERKH_PORT: String(port), NERKH_HOST: '127.0.0.1', NERKH_LOG_LEVEL: 'warn' }), ['serve'], 60_000);
      assert.equal(result.code, 2, result.stderr);
      const lines = result.stderr.trim().split('\n').filter((line) => line.startsWith('nerkh:'));
      assert.deepEqual(lines, [`nerkh: cannot listen on 127.0.0.1:${port}: another process is listening there; stop it, or set NERKH_PORT`]);
      assert.ok(!/database/i.test(result.stderr), result.stderr);
    } finally {
      holder.close();
      dir.cleanup();
    }
  });
});
