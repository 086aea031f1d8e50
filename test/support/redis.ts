import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { RedisLink } from '../../src/bus/link.js';
import { createLogger } from '../../src/log.js';

/** The shared Redis the suites run against (NERKH_TEST_REDIS_URL); see services.ts for when it is missing. */
export { REDIS_URL } from './services.js';

export const silent = createLogger('silent');

/** A prefix no other test run shares, so suites never see each other's keys. */
export function randomPrefix(): string {
  return `nerkh-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

/** A link as one node would hold it. */
export function openLink(url: string, prefix: string, commandTimeoutMs?: number): RedisLink {
  return new RedisLink({ url, prefix, logger: silent, commandTimeoutMs });
}

/** Delete every key under `prefix` (never a FLUSH: the server is shared). */
export async function removePrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/** How many keys live under `prefix`. */
export async function countKeys(url: string, prefix: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    let cursor = '0';
    let count = 0;
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    return count;
  } finally {
    client.disconnect();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A redis-server of the test's own on a spare port, keeping nothing on disk,
 * that the test may stop and start again (on the same port) to stage an outage.
 * The shared server is never touched.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    /** Set: the server runs with `--requirepass`, and `url` carries it. */
    readonly password: string | null,
  ) {}

  static async create(options: { password?: string } = {}): Promise<OwnRedis> {
    return new OwnRedis(await freePort(), options.password ?? null);
  }

  get url(): string {
    return this.password === null ? `redis://127.0.0.1:${this.port}` : `redis://:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const auth = this.password === null ? [] : ['--requirepass', this.password];
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', ...auth], { stdio: 'ignore' });
    this.child = child;
    // A missing binary is said plainly, not left as an uncaught spawn error.
    let spawnError: Error | null = null;
    child.once('error', (error) => (spawnError = error));
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (spawnError) throw new Error(`redis-server could not be started (${(spawnError as Error).message}): install it (apt-get install redis-server)`);
        if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
