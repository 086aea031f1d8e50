/**
 * The process logger keeps keys out of every line, whatever writes it: a
 * request object logged whole (as Fastify's own lines do), an error whose
 * message names an address, a plain message from a child logger (as each
 * request's is). Run in a child process, since the logger writes to stdout.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const LOG_MODULE = fileURLToPath(new URL('../../src/log.ts', import.meta.url));
const KEY = 'nrk_Vb7Kp2Qx9Lm4Ns6Rt8Wy1Zc3Df5Gh0J';

describe('createLogger', () => {
  it('writes no key, in any field or message, and no request headers', () => {
    const script = `
      import { createLogger } from ${JSON.stringify(LOG_MODULE)};
      const key = ${JSON.stringify(KEY)};
      const logger = createLogger('info');
      const child = logger.child({ reqId: 'r1' });
      child.info({ req: { method: 'GET', url: '/v1/stream?api_key=' + key, headers: { 'x-api-key': key }, ip: '10.0.0.1' } }, 'incoming request');
      child.warn({ err: new Error('Reply was already sent for "/v1/stream?API_KEY=not-a-key-but-secret&keys=usd_free"') }, 'reply sent twice');
      child.info('Route GET:/v1/rates/nrk%5F' + key.slice(4) + ' not found');
      logger.info({ url: '/v1/rates/usd_free,coin_emami', status: 200 }, 'request');
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(lines.length, 4, run.stdout);
    assert.ok(!run.stdout.includes(KEY.slice(4)), run.stdout);
    assert.ok(!run.stdout.includes('not-a-key-but-secret'), run.stdout);
    assert.deepEqual(lines[0]!.req, { method: 'GET', url: '/v1/stream?api_key=[redacted]' }, 'a request keeps only its method and redacted address');
    assert.match(String((lines[1]!.err as { message: string }).message), /API_KEY=\[redacted\]&keys=usd_free/);
    assert.equal(lines[2]!.msg, 'Route GET:/v1/rates/[redacted] not found');
    assert.equal(lines[3]!.url, '/v1/rates/usd_free,coin_emami', 'a line without a key is written as it was');
  });
});
