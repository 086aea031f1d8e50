import type { RedisLink } from '../../src/bus/link.js';
import type { Clock } from '../../src/domain/clock.js';
import { ZoneTime } from '../../src/domain/time.js';
import type { LimitDecision, LimitSpec } from '../../src/access/limiter/limiter.js';
import { RedisLimiter } from '../../src/access/limiter/redis.js';
import { openLink, silent } from '../support/redis.js';

export const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Real time, shifted to begin `intoMs` into a minute: a test's requests stay
 * in one window (unless it moves the clock) while the limiter's timers still
 * see time pass.
 */
export class TestClock implements Clock {
  private offset: number;

  constructor(intoMs = 1000) {
    const now = Date.now();
    this.offset = now - (now % 60_000) + 60_000 + intoMs - now;
  }

  now(): number {
    return Date.now() + this.offset;
  }

  advance(ms: number): void {
    this.offset += ms;
  }

  /** Jump to `ms` into the current minute. */
  toSecond(ms: number): void {
    const now = this.now();
    this.offset += now - (now % 60_000) + ms - now;
  }
}

/** Move a test clock past the zone's next midnight when it is closer than `margin`, so a test's minutes stay in one day. */
export function awayFromMidnight(clock: TestClock, margin: number): void {
  const untilMidnight = new ZoneTime('Asia/Tehran', clock).nextMidnight(clock.now()) - clock.now();
  if (untilMidnight < margin) clock.advance(untilMidnight + 60_000);
}

export interface Cluster {
  links: RedisLink[];
  limiters: RedisLimiter[];
  clock: TestClock;
  close(): Promise<void>;
}

/** `size` limiter nodes, each with its own connection, sharing one prefix and one clock; resolves once all are connected. */
export async function cluster(url: string, prefix: string, size: number, clock = new TestClock(), nodes = () => size, waitForRedis = true): Promise<Cluster> {
  const time = new ZoneTime('Asia/Tehran', clock);
  const links = Array.from({ length: size }, () => openLink(url, prefix));
  const limiters = links.map((link) => new RedisLimiter(link, time, { nodes, clock, logger: silent }));
  if (waitForRedis) await Promise.all(links.map((link) => link.whenReady(3000)));
  else await Promise.all(links.map((link) => link.settled()));
  return {
    links,
    limiters,
    clock,
    async close() {
      await Promise.all(limiters.map((limiter) => limiter.close()));
      await Promise.all(links.map((link) => link.close()));
    },
  };
}

export interface HammerResult {
  admitted: number;
  refused: number;
  perNode: number[];
  /** How many answers were promises (had to wait for Redis). */
  waited: number;
  decisions: LimitDecision[];
}

/**
 * `total` requests for one key, node `pick(i)` answering request i, in bursts
 * of `burst` spread over `spanMs` of real time (I/O runs between bursts, as on
 * a busy event loop).
 */
export async function hammer(limiters: RedisLimiter[], keyId: string, spec: LimitSpec, total: number, pick: (i: number) => number, clock: Clock, spanMs = 0, burst = 20): Promise<HammerResult> {
  const started = Date.now();
  const perNode = limiters.map(() => 0);
  const pending: Promise<void>[] = [];
  const decisions: LimitDecision[] = [];
  let waited = 0;
  const record = (node: number, decision: LimitDecision) => {
    decisions.push(decision);
    if (decision.allowed) perNode[node]!++;
  };
  for (let i = 0; i < total; i++) {
    const node = pick(i);
    const answer = limiters[node]!.consume(keyId, spec, clock.now());
    if (answer instanceof Promise) {
      waited++;
      pending.push(answer.then((decision) => record(node, decision)));
    } else record(node, answer);
    if (i % burst === burst - 1) {
      const due = started + (spanMs * (i + 1)) / total - Date.now();
      if (due > 1) await new Promise((resolve) => setTimeout(resolve, due));
      else await yieldToIo();
    }
  }
  await Promise.all(pending);
  const admitted = perNode.reduce((a, b) => a + b, 0);
  return { admitted, refused: total - admitted, perNode, waited, decisions };
}

/** The bound of docs/operations.md#shared-limits: at least the limit when demand exceeds it, at most limit + 1 % + nodes. */
export function bound(limit: number, nodes: number): [number, number] {
  return [limit, limit + Math.floor(limit * 0.01) + nodes];
}
