import { randomBytes } from 'node:crypto';
import { detached } from '../domain/cache-size.js';
import type { ZoneTime } from '../domain/time.js';
import type { StoreHealth } from '../store/store-health.js';
import type { KeyRepository } from '../store/key-repository.js';
import { foldInto, foldKey, HOURLY_KEEP_MS, MAX_PATH, minuteOf, type UsageCount, type UsageErrorEntry, type UsageHour, type UsageRepository } from '../store/usage-repository.js';

/**
 * Twice a second: a process killed without warning (SIGKILL) loses at most the
 * counts of the last flush interval plus one write, which stays under a second.
 */
export const FLUSH_MS = 500;
const PRUNE_MS = 60_000;
/**
 * Error-log entries held (one per account, service, error and minute, however
 * many failures each folds); beyond this the oldest are dropped (and counted).
 */
const MAX_PENDING_ERRORS = 10_000;
/**
 * Count rows (account × key × day × service) held while the store is away:
 * about 40 MB. A new row past this is dropped and counted; existing rows keep counting.
 */
const MAX_PENDING_ROWS = 200_000;

/** What the meter holds unwritten (error-log entries, not failures), and what it had to drop: for `/metrics`. */
export interface UsageBacklog {
  pendingRequests: number;
  pendingErrors: number;
  droppedRequests: number;
  droppedErrors: number;
}

/** What `stop()` could not write: lost with the process. */
export interface UsageLoss {
  /** Requests counted and not written (failed ones included). */
  requests: number;
  /** Error-log entries not written, and the failures they fold. */
  errorEntries: number;
  errors: number;
}

/** Counts cut for one write: retried unchanged, under the same id, until the store takes them. */
interface Batch {
  id: string;
  counts: UsageCount[];
  errors: UsageErrorEntry[];
  hours: UsageHour[];
  requests: number;
}

/**
 * Counts every authenticated request per account, key, day and service in
 * memory (one map update per request) and writes the counts in batches twice
 * a second and on shutdown. While the store is unreachable the counts wait in
 * memory (bounded) and are written when it answers again.
 *
 * Failures also fold into the error log, one entry per account, service,
 * error code and minute with a count: a key spending its limit at any rate
 * adds one entry a minute per error. An entry is held until its minute has
 * passed and then written once, in the next batch, so the log is written at
 * most once a minute per error however fast the failures come; `flush()` (a
 * usage report, shutdown) writes the current minute's entries too, and the
 * store adds the rest of that minute to the same row.
 *
 * A batch whose write fails is kept as it was and sent again under the same
 * id, which the store applies at most once: a connection that drops around a
 * commit can neither lose nor double a batch. Requests arriving meanwhile
 * gather in the next batch. Last-used times of keys ride along the same
 * flush; that bookkeeping can never fail a request.
 */
export class UsageMeter {
  private counts = new Map<string, UsageCount>();
  /** Requests per account in the running hour (and the last, across its end), by account id: rebuilt empty with `counts`. */
  private hours = new Map<string, UsageHour>();
  /** The zone's hour (`YYYY-MM-DDTHH`) of the last second recorded, worked out once a second. */
  private hourSecond = -1;
  private hour = '';
  /**
   * The same counts by key id, then service: the ids are the directory's own
   * strings, whose hashes V8 keeps, so a request costs two lookups and no
   * string building. Rebuilt empty whenever `counts` is replaced.
   */
  private recent = new Map<string, Map<string, UsageCount>>();
  /** Error-log entries by fold key (account, service, error, minute), oldest first. */
  private errors = new Map<string, UsageErrorEntry>();
  private lastUsed = new Map<string, number>();
  private readonly touchedAccounts = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** The batch being (or failing to be) written; new counts wait until it lands. */
  private unwritten: Batch | null = null;
  private readonly batchPrefix = randomBytes(6).toString('hex');
  private batchSeq = 0;
  private nextPrune = 0;
  private pendingRequests = 0;
  private droppedRequests = 0;
  private droppedErrors = 0;

  constructor(
    private readonly usage: UsageRepository,
    private readonly keys: KeyRepository,
    private readonly time: ZoneTime,
    private readonly health: StoreHealth,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  record(accountId: string, keyId: string, service: string, now: number, failure: { status: number; error: string; path: string } | null): void {
    const day = this.time.day(now);
    let count = this.recent.get(keyId)?.get(service);
    if (count === undefined || count.day !== day) {
      const created = this.countFor(accountId, keyId, day, service);
      if (created === null) {
        this.droppedRequests++;
        return;
      }
      count = created;
    }
    this.pendingRequests++;
    this.countHour(accountId, now);
    if (failure) {
      count.errors++;
      this.logError(accountId, keyId, service, now, failure);
    } else {
      count.ok++;
    }
    this.lastUsed.set(keyId, now);
  }

  /** One more request in the account's hour: a map lookup, and a row when the hour (or the batch) is new. Bounded with the daily rows. */
  private countHour(accountId: string, now: number): void {
    const second = Math.floor(now / 1000);
    if (second !== this.hourSecond) {
      this.hourSecond = second;
      this.hour = this.time.format(now).slice(0, 13);
    }
    const row = this.hours.get(accountId);
    if (row !== undefined && row.hour === this.hour) {
      row.requests++;
      return;
    }
    if (row === undefined && this.hours.size + this.counts.size >= MAX_PENDING_ROWS) return;
    // Another hour within one batch (the hour turned, or a clock moved): each hour keeps one row, so a batch holds each (account, hour) once.
    if (row !== undefined) this.parkHour(row);
    const parked = `${accountId}\u0000${this.hour}`;
    const again = this.hours.get(parked);
    if (again !== undefined) this.hours.delete(parked);
    const current = again ?? { account_id: accountId, hour: this.hour, requests: 0 };
    current.requests++;
    this.hours.set(accountId, current);
  }

  /** An hour's row no longer current, kept under (account, hour) until the batch is cut. */
  private parkHour(row: UsageHour): void {
    const parked = `${row.account_id}\u0000${row.hour}`;
    const held = this.hours.get(parked);
    if (held !== undefined) held.requests += row.requests;
    else this.hours.set(parked, row);
  }

  /** Fold a failure into its minute's entry: a repeat is one map lookup and a few assignments. */
  private logError(accountId: string, keyId: string, service: string, now: number, failure: { status: number; error: string; path: string }): void {
    const id = foldKey(accountId, service, failure.error, minuteOf(now));
    const entry = this.errors.get(id);
    if (entry) {
      foldInto(entry, keyId, now, failure.path, failure.status, 1);
      return;
    }
    if (this.errors.size >= MAX_PENDING_ERRORS) {
      this.errors.delete(this.errors.keys().next().value!);
      this.droppedErrors++;
    }
    this.errors.set(id, { account_id: accountId, key_id: keyId, at: now, service, path: detached(failure.path.slice(0, MAX_PATH)), http_status: failure.status, error: failure.error, count: 1 });
    // Only a new entry can grow the account's log past its limit.
    this.touchedAccounts.add(accountId);
  }

  backlog(): UsageBacklog {
    const pendingErrors = this.errors.size + (this.unwritten?.errors.length ?? 0);
    return { pendingRequests: this.pendingRequests, pendingErrors, droppedRequests: this.droppedRequests, droppedErrors: this.droppedErrors };
  }

  /** The pending count for this key, day and service, created if need be (null past the bound), and indexed for the next request. */
  private countFor(accountId: string, keyId: string, day: string, service: string): UsageCount | null {
    const id = `${accountId}\u0000${keyId}\u0000${day}\u0000${service}`;
    let count = this.counts.get(id);
    if (!count) {
      if (this.counts.size + (this.unwritten?.counts.length ?? 0) >= MAX_PENDING_ROWS) return null;
      count = { account_id: accountId, key_id: keyId, day, service, ok: 0, errors: 0 };
      this.counts.set(id, count);
    }
    let byService = this.recent.get(keyId);
    if (!byService) this.recent.set(keyId, (byService = new Map()));
    byService.set(service, count);
    return count;
  }

  start(): void {
    // A tick while a write is still out (a slow or hanging database) waits for the next tick, so writes never pile up.
    this.timer = setInterval(() => {
      if (!this.flushing) void this.flush(false);
    }, FLUSH_MS);
    this.timer.unref();
  }

  /**
   * Stop the timer and write everything still pending. Returns what could not
   * be written (the store is away, or refused this last write), which the
   * process loses as it exits; null when everything landed.
   */
  async stop(): Promise<UsageLoss | null> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
    const entries = [...this.errors.values(), ...(this.unwritten?.errors ?? [])];
    if (this.pendingRequests === 0 && entries.length === 0) return null;
    return { requests: this.pendingRequests, errorEntries: entries.length, errors: entries.reduce((sum, entry) => sum + entry.count, 0) };
  }

  /**
   * Write what is pending; one flush at a time (a call during one runs after
   * it). `everything` includes the error-log entries of the minute still
   * running, which the timer's flushes hold until it has passed.
   */
  flush(everything = true): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush(everything));
    this.flushing = this.writePending(everything).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async writePending(everything: boolean): Promise<void> {
    // A store known to be away (a removed SQLite file, say) is not written to; its ping brings it back.
    if (!this.health.reachable) return;
    const batch = this.unwritten ?? this.cutBatch(everything);
    if (batch) {
      this.unwritten = batch;
      try {
        await this.usage.record(batch.counts, batch.errors, batch.id, this.time.now(), batch.hours);
      } catch (error) {
        this.health.failed(error, this.time.now());
        this.onError(error);
        return;
      }
      this.unwritten = null;
      this.pendingRequests -= batch.requests;
      this.health.succeeded(this.time.now());
      // What arrived while this batch was held goes out now rather than half a second later.
      if (this.counts.size > 0 || (everything && this.errors.size > 0)) return this.writePending(everything);
    }
    await this.writeBookkeeping();
  }

  /** Everything counted so far as one batch (error-log entries of past minutes only, unless `everything`), or null when there is nothing. */
  private cutBatch(everything: boolean): Batch | null {
    const errors: UsageErrorEntry[] = [];
    const running = everything ? Infinity : minuteOf(this.time.now());
    for (const [id, entry] of this.errors) {
      if (minuteOf(entry.at) >= running) continue;
      errors.push(entry);
      this.errors.delete(id);
    }
    if (this.counts.size === 0 && errors.length === 0) return null;
    const counts = [...this.counts.values()];
    const hours = [...this.hours.values()];
    const batch = { id: `${this.batchPrefix}-${++this.batchSeq}`, counts, errors, hours, requests: counts.reduce((sum, c) => sum + c.ok + c.errors, 0) };
    this.counts = new Map();
    this.recent = new Map();
    this.hours = new Map();
    return batch;
  }

  /** Last-used times and error-log pruning: best effort, never retried. */
  private async writeBookkeeping(): Promise<void> {
    const lastUsed = this.lastUsed;
    this.lastUsed = new Map();
    try {
      await this.keys.touch(lastUsed);
      const now = this.time.now();
      if (now >= this.nextPrune) {
        this.nextPrune = now + PRUNE_MS;
        const accounts = [...this.touchedAccounts];
        this.touchedAccounts.clear();
        if (accounts.length > 0) await this.usage.pruneErrors(accounts, now);
        await this.usage.pruneBatches(now);
        await this.usage.pruneHourly(this.time.format(now - HOURLY_KEEP_MS).slice(0, 13));
      }
    } catch (error) {
      this.onError(error);
    }
  }
}
