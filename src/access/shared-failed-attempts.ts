import type { RedisLink } from '../bus/link.js';
import { systemClock, type Clock } from '../domain/clock.js';
import type { FailedKeyThrottle } from './failed-attempts.js';

const MINUTE_MS = 60_000;
/** How often a node adds its new failures to the shared counts (and learns the others'). */
const FLUSH_MS = 100;

interface AddressWindow {
  endsAt: number;
  /** The shared count as of this node's last flush, its own flushed failures included. */
  shared: number;
  /** Failures being flushed now. */
  sending: number;
  /** Failures not yet flushed. */
  pending: number;
}

/**
 * The failed-key throttle shared by every node: each node counts locally and
 * answers at once, adds its new failures to the address's shared minute
 * counter every 100 ms, and takes the shared total from the reply. It is a
 * throttle, so approximate is enough: an address gets at most its limit
 * plus what other nodes count for it between two of their flushes (about
 * 100 ms of its failures there) before every node answers 429. While Redis is
 * away each node counts alone (the limit then holds per node) and sends
 * what it counted when Redis is back.
 */
export class SharedFailedAttempts implements FailedKeyThrottle {
  private readonly windows = new Map<string, AddressWindow>();
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing = false;
  private nextSweep = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly perMinute = 30,
    private readonly clock: Clock = systemClock,
  ) {}

  record(address: string, now: number): number {
    if (now >= this.nextSweep) this.sweep(now);
    let window = this.windows.get(address);
    if (!window || now >= window.endsAt) {
      window = { endsAt: now - (now % MINUTE_MS) + MINUTE_MS, shared: 0, sending: 0, pending: 0 };
      this.windows.set(address, window);
    }
    window.pending++;
    this.scheduleFlush();
    const count = window.shared + window.sending + window.pending;
    return count > this.perMinute ? Math.max(1, Math.ceil((window.endsAt - now) / 1000)) : 0;
  }

  /** Send what is still counted only here (on shutdown). */
  async close(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, FLUSH_MS);
    this.flushTimer.unref();
  }

  /** One pipeline: add each address's new failures, read back the shared totals. Never rejects. */
  private async flush(): Promise<void> {
    if (this.flushing) return this.scheduleFlush();
    const now = this.clock.now();
    const batch: [string, AddressWindow, number][] = [];
    for (const [address, window] of this.windows) {
      if (window.pending > 0 && window.endsAt > now) batch.push([address, window, window.pending]);
    }
    if (batch.length === 0) return;
    if (this.link.state !== 'ready') return this.scheduleFlush();
    this.flushing = true;
    const pipeline = this.link.client.pipeline();
    for (const [address, window, count] of batch) {
      window.pending -= count;
      window.sending += count;
      const key = this.link.key(`fail:${address}:${window.endsAt}`);
      pipeline.incrby(key, count).pexpire(key, window.endsAt - now + MINUTE_MS);
    }
    let replies: [Error | null, unknown][] | null = null;
    try {
      replies = await pipeline.exec();
    } catch {
      replies = null;
    }
    batch.forEach(([, window, count], i) => {
      window.sending -= count;
      const [error, total] = replies?.[i * 2] ?? [new Error('no reply'), null];
      if (error || typeof total !== 'number') window.pending += count;
      else window.shared = Math.max(window.shared, total);
    });
    this.flushing = false;
    if (batch.some(([, window]) => window.pending > 0)) this.scheduleFlush();
  }

  private sweep(now: number): void {
    this.nextSweep = now + MINUTE_MS;
    for (const [address, window] of this.windows) if (window.endsAt <= now) this.windows.delete(address);
  }
}
