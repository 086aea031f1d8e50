import type { ZoneTime } from '../domain/time.js';
import type { KeyRepository } from '../store/keys.js';
import type { UsageCount, UsageErrorEntry, UsageRepository } from '../store/usage.js';

const FLUSH_MS = 1000;
const PRUNE_MS = 60_000;
/** Errors held in memory between flushes; beyond this the oldest are dropped (counts never are). */
const MAX_PENDING_ERRORS = 10_000;

/**
 * Counts every authenticated request per account, key, day and service in
 * memory (one map update per request) and writes the counts in batches at
 * least once a second and on shutdown. Last-used times of keys ride along
 * the same flush; that bookkeeping can never fail a request.
 */
export class UsageMeter {
  private counts = new Map<string, UsageCount>();
  /**
   * The same counts by key id, then service: the ids are the directory's own
   * strings, whose hashes V8 keeps, so a request costs two lookups and no
   * string building. Rebuilt empty whenever `counts` is replaced.
   */
  private recent = new Map<string, Map<string, UsageCount>>();
  private errors: UsageErrorEntry[] = [];
  private lastUsed = new Map<string, number>();
  private readonly touchedAccounts = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private nextPrune = 0;

  constructor(
    private readonly usage: UsageRepository,
    private readonly keys: KeyRepository,
    private readonly time: ZoneTime,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  record(accountId: string, keyId: string, service: string, now: number, failure: { status: number; error: string; path: string } | null): void {
    const day = this.time.day(now);
    let count = this.recent.get(keyId)?.get(service);
    if (count === undefined || count.day !== day) count = this.countFor(accountId, keyId, day, service);
    if (failure) {
      count.errors++;
      if (this.errors.length >= MAX_PENDING_ERRORS) this.errors.shift();
      this.errors.push({ account_id: accountId, key_id: keyId, at: now, service, path: failure.path.slice(0, 500), http_status: failure.status, error: failure.error });
      this.touchedAccounts.add(accountId);
    } else {
      count.ok++;
    }
    this.lastUsed.set(keyId, now);
  }

  /** The pending count for this key, day and service, created if need be, and indexed for the next request. */
  private countFor(accountId: string, keyId: string, day: string, service: string): UsageCount {
    const id = `${accountId}\u0000${keyId}\u0000${day}\u0000${service}`;
    let count = this.counts.get(id);
    if (!count) {
      count = { account_id: accountId, key_id: keyId, day, service, ok: 0, errors: 0 };
      this.counts.set(id, count);
    }
    let byService = this.recent.get(keyId);
    if (!byService) this.recent.set(keyId, (byService = new Map()));
    byService.set(service, count);
    return count;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Stop the timer and write everything still pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Write pending counts; one flush at a time, and a failed batch is kept for the next try. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    this.flushing = this.writePending().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    const counts = this.counts;
    const errors = this.errors;
    const lastUsed = this.lastUsed;
    this.counts = new Map();
    this.recent = new Map();
    this.errors = [];
    this.lastUsed = new Map();
    try {
      await this.usage.record([...counts.values()], errors);
    } catch (error) {
      this.restore(counts, errors);
      this.onError(error);
      return;
    }
    try {
      await this.keys.touch(lastUsed);
      const now = this.time.now();
      if (now >= this.nextPrune && this.touchedAccounts.size > 0) {
        this.nextPrune = now + PRUNE_MS;
        const accounts = [...this.touchedAccounts];
        this.touchedAccounts.clear();
        await this.usage.pruneErrors(accounts, now);
      }
    } catch (error) {
      this.onError(error);
    }
  }

  /** Put a batch that failed to write back in front of what arrived meanwhile. */
  private restore(counts: Map<string, UsageCount>, errors: UsageErrorEntry[]): void {
    for (const [id, count] of this.counts) {
      const earlier = counts.get(id);
      if (earlier) {
        earlier.ok += count.ok;
        earlier.errors += count.errors;
      } else {
        counts.set(id, count);
      }
    }
    this.counts = counts;
    this.recent = new Map();
    this.errors = [...errors, ...this.errors].slice(-MAX_PENDING_ERRORS);
  }
}
