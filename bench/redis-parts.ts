/**
 * `npm run bench:redis`: the cost of the shared parts on the request path and
 * on the data path. Never part of `npm test`.
 *
 * 1. `consume()` for keys already seen: the in-process limiter against the
 *    Redis limiter (three nodes in this process, each with its own connection),
 *    in ns per call, for one hot key and for 10,000 keys in turn.
 * 2. Snapshot fan-out: the full catalogue, every value changed each time,
 *    published by a leader and received by another node in a process of its
 *    own: publish-to-receive latency, p50 and p99, with the encoding and
 *    decoding shares measured alone.
 *
 * Redis: `NERKH_BENCH_REDIS_URL` (default redis://127.0.0.1:6379); every key
 * under a random prefix, removed at the end.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { LimitSpec } from '../src/access/limiter/limiter.js';
import { MemoryLimiter } from '../src/access/limiter/memory.js';
import { RedisLimiter } from '../src/access/limiter/redis.js';
import { RedisLink } from '../src/bus/link.js';
import { RedisSnapshotBus } from '../src/bus/redis.js';
import { RedisLeaderLease } from '../src/bus/redis-lease.js';
import type { SharedSnapshot } from '../src/bus/snapshot-bus.js';
import { decodeSnapshot, encodeSnapshot, withVersion } from '../src/bus/wire.js';
import { loadCatalogue } from '../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../src/config.js';
import { ZoneTime } from '../src/domain/time.js';
import { RatesEngine } from '../src/live/engine.js';
import { prepareRate } from '../src/live/prepare.js';
import type { PreparedRate } from '../src/live/snapshot.js';
import { createLogger } from '../src/log.js';
import { SourceMonitor } from '../src/sources/monitor.js';

const URL = process.env.NERKH_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `nerkh-bench:${randomBytes(4).toString('hex')}:`;
const CALLS = Number(process.env.BENCH_CALLS ?? 2_000_000);
const PUBLISHES = Number(process.env.BENCH_PUBLISHES ?? 300);
const logger = createLogger('silent');
const time = new ZoneTime('Asia/Tehran');
const spec: LimitSpec = { perMinute: 100_000_000, perDay: null };

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/** ns per call over `calls` calls, key `keyOf(i)`, letting I/O through every 1,000 calls as a serving loop would. */
async function timeConsume(consume: (key: string, now: number) => unknown, keyOf: (i: number) => string, calls: number): Promise<{ nsPerCall: number; waited: number }> {
  for (let i = 0; i < 20_000; i++) {
    consume(keyOf(i), Date.now());
    if (i % 1000 === 999) await yieldToIo();
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  let waited = 0;
  let busy = 0n;
  for (let done = 0; done < calls; done += 1000) {
    const now = Date.now();
    const started = process.hrtime.bigint();
    for (let i = done; i < done + 1000; i++) if (consume(keyOf(i), now) instanceof Promise) waited++;
    busy += process.hrtime.bigint() - started;
    await yieldToIo();
  }
  return { nsPerCall: Number(busy) / calls, waited };
}

async function limiterFigures(): Promise<Record<string, string>> {
  const memory = new MemoryLimiter(time);
  const links = [0, 1, 2].map(() => new RedisLink({ url: URL, prefix: PREFIX, logger }));
  await Promise.all(links.map((link) => link.whenReady(3000)));
  const shared = links.map((link) => new RedisLimiter(link, time, { nodes: () => 3, logger }));
  const rows: Record<string, string> = {};
  try {
    const hot = () => 'hot';
    const keys = Array.from({ length: 10_000 }, (_, i) => `key-${i}`);
    const many = (i: number) => keys[i % 10_000]!;
    const m1 = await timeConsume((key, now) => memory.consume(key, spec, now), hot, CALLS);
    const r1 = await timeConsume((key, now) => shared[0]!.consume(key, spec, now), hot, CALLS);
    const m2 = await timeConsume((key, now) => memory.consume(key, spec, now), many, CALLS);
    const r2 = await timeConsume((key, now) => shared[0]!.consume(key, spec, now), many, CALLS);
    rows['consume, one hot key: memory'] = `${m1.nsPerCall.toFixed(0)} ns/call`;
    rows['consume, one hot key: redis'] = `${r1.nsPerCall.toFixed(0)} ns/call (${r1.waited} of ${CALLS} waited)`;
    rows['consume, 10,000 keys: memory'] = `${m2.nsPerCall.toFixed(0)} ns/call`;
    rows['consume, 10,000 keys: redis'] = `${r2.nsPerCall.toFixed(0)} ns/call (${r2.waited} of ${CALLS} waited)`;
  } finally {
    await Promise.all(shared.map((limiter) => limiter.close()));
    await Promise.all(links.map((link) => link.close()));
  }
  return rows;
}

/** A leader engine over every reference of the bundled catalogue, all fresh: the biggest snapshot there is. */
async function fullEngine(dir: string): Promise<RatesEngine> {
  const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  const items: Record<string, number> = {};
  catalogue.references.forEach((reference, i) => (items[reference.source_key] = 1000 + i * 7.25));
  const path = join(dir, 'all.json');
  writeFileSync(path, JSON.stringify({ updated_at: new Date().toISOString(), items }));
  const engine = new RatesEngine(catalogue, new SourceMonitor([{ name: 'all', type: 'file', path, max_age_seconds: 3600, poll_seconds: 1, timeout_seconds: 5 }]), time);
  await engine.start();
  return engine;
}

/**
 * Two versions of the full snapshot whose every value differs, published in
 * turn: each publish changes every rate (the worst case for the receiver).
 */
function alternatingSnapshots(engine: RatesEngine): SharedSnapshot[] {
  return [0, 1].map((turn) => {
    const rates = new Map<string, PreparedRate>();
    for (const [key, prepared] of engine.current().rates) {
      const rate = { ...prepared.rate, value: prepared.rate.value === null ? null : `${prepared.rate.value}${turn}` };
      rates.set(key, prepareRate(rate, time));
    }
    return { snapshot: { ...engine.current(), rates }, health: [], lastKnown: engine.knownValues(), leader: 'bench-leader' };
  });
}

/** The receiving node, in a process of its own: prints `<version> <epoch ms>` for every snapshot it is handed. */
async function receiver(): Promise<void> {
  const link = new RedisLink({ url: URL, prefix: process.env.BENCH_PREFIX!, logger });
  const bus = new RedisSnapshotBus(link, { time, logger });
  bus.subscribe((shared) => process.stdout.write(`${shared.snapshot.version} ${performance.timeOrigin + performance.now()}\n`));
  await bus.start();
  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => void bus.close().then(() => link.close()));
}

async function busFigures(): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'nerkh-bench-bus-'));
  const leaderLink = new RedisLink({ url: URL, prefix: PREFIX, logger });
  const lease = new RedisLeaderLease(leaderLink, { id: 'bench-leader', logger });
  const leader = new RedisSnapshotBus(leaderLink, { time, logger, lease });
  const engine = await fullEngine(dir);
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--receiver'], { env: { ...process.env, BENCH_PREFIX: PREFIX }, stdio: ['pipe', 'pipe', 'inherit'] });
  const arrived = new Map<number, number>();
  let lines = '';
  const ready = new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      lines += chunk.toString();
      let newline: number;
      while ((newline = lines.indexOf('\n')) >= 0) {
        const line = lines.slice(0, newline);
        lines = lines.slice(newline + 1);
        if (line === 'ready') resolve();
        const [version, at] = line.split(' ');
        if (at) arrived.set(Number(version), Number(at));
      }
    });
  });
  try {
    await Promise.all([lease.start(), leader.start(), ready]);
    if (!lease.isLeader) throw new Error('the bench leader did not get the lease');
    const snapshots = alternatingSnapshots(engine);
    const bytes = encodeSnapshot(snapshots[0]!).length;
    const encodeMs: number[] = [];
    const decodeMs: number[] = [];
    let previous: SharedSnapshot | null = null;
    for (let i = 0; i < 100; i++) {
      let started = process.hrtime.bigint();
      const message = withVersion(i + 1, encodeSnapshot(snapshots[i % 2]!));
      encodeMs.push(Number(process.hrtime.bigint() - started) / 1e6);
      started = process.hrtime.bigint();
      previous = decodeSnapshot(message, time, previous);
      decodeMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const sentAt = new Map<number, number>();
    const publishMs: number[] = [];
    for (let i = 0; i < PUBLISHES; i++) {
      const started = performance.timeOrigin + performance.now();
      const published = await leader.publish(snapshots[i % 2]!);
      if (!published) throw new Error('publish refused');
      publishMs.push(performance.timeOrigin + performance.now() - started);
      sentAt.set(published.snapshot.version, started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const latencies: number[] = [];
    for (const [version, started] of sentAt) {
      const at = arrived.get(version);
      if (at !== undefined) latencies.push(at - started);
    }
    return {
      'snapshot message': `${engine.current().rates.size} rates, ${(bytes / 1024).toFixed(0)} KB`,
      'encode (leader)': percentiles(encodeMs),
      'decode, every rate changed (receiver)': percentiles(decodeMs),
      'publish (fenced script, leader side)': percentiles(publishMs),
      'publish → received by another process': `${percentiles(latencies)} (${latencies.length} of ${PUBLISHES} received)`,
      'load average while measuring': loadavg().map((n) => n.toFixed(1)).join(' '),
    };
  } finally {
    child.stdin!.end();
    engine.stop();
    await leader.close();
    await lease.close();
    await leaderLink.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2);
  return `p50 ${at(50)} ms, p99 ${at(99)} ms, max ${sorted.at(-1)!.toFixed(2)} ms`;
}

async function removePrefix(): Promise<void> {
  const client = new Redis(URL);
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  client.disconnect();
}

async function main() {
  if (process.argv.includes('--receiver')) return receiver();
  try {
    const rows = { ...(await limiterFigures()), ...(await busFigures()) };
    const width = Math.max(...Object.keys(rows).map((k) => k.length));
    for (const [name, value] of Object.entries(rows)) console.log(`${name.padEnd(width)}  ${value}`);
  } finally {
    await removePrefix();
  }
}

await main();
