/**
 * A node whose Redis is not there yet (a wrong port, or Redis still starting):
 * it listens, but says on its start line and on /readyz that it waits for
 * Redis, naming the address and why, instead of "ready"; once Redis answers
 * on that port it takes the lease, says "ready" and /readyz answers 200.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../support/env.js';
import { OwnRedis, randomPrefix } from '../support/redis.js';
import { needs } from '../support/services.js';
import { assertBuilt, get, pollUntil, startServer, type ServerProcess } from './helpers.js';

assertBuilt();

describe('a node waiting for Redis', needs('redis'), () => {
  const dir = tempDir('nerkh-readiness-');
  // Chosen free and not started: nothing listens on its port until the test starts it.
  let redis: OwnRedis;
  let server: ServerProcess;

  before(async () => {
    redis = await OwnRedis.create();
    server = await startServer({ NERKH_DATA_DIR: dir.path, NERKH_REDIS_URL: redis.url, NERKH_REDIS_PREFIX: randomPrefix(), NERKH_LOG_LEVEL: 'warn' });
  });
  after(async () => {
    await server?.kill();
    await redis?.stop();
    dir.cleanup();
  });

  it('says on its start line that it is not ready, waiting for Redis at that address, and why', () => {
    const line = /^nerkh listening on .*$/m.exec(server.stdout)?.[0] ?? '';
    assert.match(line, new RegExp(`not ready yet: waiting for Redis at 127\\.0\\.0\\.1:${redis.port} \\(connection refused\\)`), server.output());
    assert.doesNotMatch(line, /ready in/);
  });

  it('/readyz answers 503 naming Redis, its address and why', async () => {
    const answer = await get(server.base, '/readyz');
    assert.equal(answer.status, 503, answer.text);
    const body = answer.json as { error: string; message: string };
    assert.equal(body.error, 'SERVICE_UNAVAILABLE');
    assert.equal(body.message, `No snapshot has been received yet: waiting for Redis at 127.0.0.1:${redis.port} (connection refused).`);
  });

  it('once Redis answers on that port, the node says it is ready and /readyz answers 200', async () => {
    await redis.start();
    await pollUntil(async () => server.stdout, (out) => /^nerkh ready: holding rates \d+ ms after start$/m.test(out), 30_000, 100, () => server.output());
    const answer = await get(server.base, '/readyz');
    assert.equal(answer.status, 200, answer.text);
  });
});
