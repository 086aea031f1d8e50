import { LRUCache } from 'lru-cache';
import { ApiError } from '../../../domain/errors.js';
import { okHead } from '../../../render/envelope.js';
import { buildUsageReport } from '../../../render/usage-report.js';
import { ERROR_LOG_DAYS, type UsageErrorEntry } from '../../../store/usage-repository.js';
import type { AppDeps } from '../../deps.js';
import type { EndpointContext } from '../module.js';

export type UsageReportDeps = Pick<AppDeps, 'time' | 'storeReachable' | 'storeFailed' | 'meter' | 'usage'>;

/** The widest report (`days` = 90): one read of this range serves every narrower one. */
export const MAX_REPORT_DAYS = 90;
/**
 * How long one read of an account's usage serves its reports: the meter
 * writes twice a second, so a report is at most this much older than the
 * request, while a flood of reports costs one read a second per account.
 */
export const REPORT_TTL_MS = 1_000;
/** Reads held, by estimated size; an account's read is at most about 0.7 MB (1,000 error-log entries with long paths). */
const MAX_BYTES = 16 * 1024 * 1024;
/** Rendered bodies kept per read (one per distinct `days` asked within its second); more are rendered each time. */
const MAX_BODIES = 4;

/** What one read of the store holds for an account, and the reports rendered from it. */
interface UsageRead {
  at: number;
  daily: { day: string; service: string; ok: number; errors: number }[];
  /** Requests in the hour of `at` (navasan's hourly_usage). */
  hourly: number;
  errors: UsageErrorEntry[];
  /** Encoded once: a flood of one report writes the same bytes each time. */
  bodies: Map<number, Buffer>;
}

/**
 * `/v1/usage` answers from the store: a flush of the meter, a sum over daily
 * counts and up to 1,000 error-log entries, rendered as JSON. With SQLite that
 * work runs on the event loop, so a key asking for it in a flood would stall
 * every other caller. Here each account's read is shared: requests arriving
 * while one is under way wait for it (single flight), and for a second after
 * it they are answered from it, rendered once per `days`. A flood of reports
 * from one account so costs one read a second, whatever its rate.
 */
export class UsageReports {
  private readonly reads: LRUCache<string, UsageRead, number>;

  constructor(private readonly deps: UsageReportDeps) {
    this.reads = new LRUCache<string, UsageRead, number>({
      maxSize: MAX_BYTES,
      ttl: REPORT_TTL_MS,
      // Bodies memoised later are allowed for up front: at most MAX_BODIES of about the read's size each.
      sizeCalculation: (read) => estimateBytes(read) * (1 + MAX_BODIES),
      fetchMethod: (accountId, _stale, { context }) => this.read(accountId, context),
    });
  }

  /** The report's body (envelope included) for the last `days` days. */
  async body(account: { id: string; username: string; plan: { name: string } }, days: number, now: number): Promise<Buffer> {
    // A store known to be away answers at once rather than hold the request for a connection timeout.
    if (!this.deps.storeReachable()) throw unavailable();
    const read = (await this.reads.fetch(account.id, { context: now }))!;
    let body = read.bodies.get(days);
    if (body === undefined) {
      body = this.render(account, days, read);
      if (read.bodies.size < MAX_BODIES) read.bodies.set(days, body);
    }
    return body;
  }

  /**
   * The account's requests (failed ones included) this calendar month, today
   * and this hour in the zone, from the same read as the report: navasan's
   * `/usage/`, which so agrees with `/v1/usage`. The month is the zone's
   * Gregorian month, as the report's dates are.
   */
  async counts(account: { id: string }, now: number): Promise<{ monthly: number; daily: number; hourly: number }> {
    if (!this.deps.storeReachable()) throw unavailable();
    const read = (await this.reads.fetch(account.id, { context: now }))!;
    const today = this.deps.time.day(read.at);
    const month = today.slice(0, 8);
    let monthly = 0;
    let daily = 0;
    for (const row of read.daily) {
      if (row.day.startsWith(month)) monthly += row.ok + row.errors;
      if (row.day === today) daily += row.ok + row.errors;
    }
    return { monthly, daily, hourly: read.hourly };
  }

  private async read(accountId: string, now: number): Promise<UsageRead> {
    // Counts still in memory are written first, so the report includes every request served until now.
    await this.deps.meter.flush();
    // The flush is what finds a store that has just gone away.
    if (!this.deps.storeReachable()) throw unavailable();
    const fromDay = this.deps.time.day(now - (MAX_REPORT_DAYS - 1) * 86_400_000);
    const since = now - ERROR_LOG_DAYS * 86_400_000;
    try {
      const [daily, errors, hourly] = await Promise.all([
        this.deps.usage.daily(accountId, fromDay),
        this.deps.usage.errors(accountId, since),
        this.deps.usage.hourly(accountId, this.deps.time.format(now).slice(0, 13)),
      ]);
      return { at: now, daily, errors, hourly, bodies: new Map() };
    } catch (error) {
      this.deps.storeFailed(error);
      throw unavailable();
    }
  }

  private render(account: { username: string; plan: { name: string } }, days: number, read: UsageRead): Buffer {
    const time = this.deps.time;
    const since = read.at - Math.min(days, ERROR_LOG_DAYS) * 86_400_000;
    // Rows before the range are left out by the report itself; the error log is cut here (it is newest first).
    let end = read.errors.length;
    while (end > 0 && read.errors[end - 1]!.at < since) end--;
    const errors = end === read.errors.length ? read.errors : read.errors.slice(0, end);
    const report = buildUsageReport({ username: account.username, plan: account.plan.name }, days, read.at, time, read.daily, errors);
    return Buffer.from(`${okHead(time.format(read.at))},${JSON.stringify(report).slice(1)}`);
  }
}

/** A rough size in bytes: what the cache bound counts, not an exact figure. */
function estimateBytes(read: UsageRead): number {
  let bytes = 256 + read.daily.length * 120;
  for (const entry of read.errors) bytes += 240 + entry.path.length * 2;
  return bytes;
}

/** The store's health check runs every second: by then it may answer again. */
function unavailable(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'Usage is unavailable right now: the store does not answer. Your requests are still counted and served.', { 'retry-after': '1' });
}

/** One reader of usage per app: /v1/usage and navasan's /usage/ answer from the same reads. */
export function appUsageReports(context: EndpointContext): UsageReports {
  return context.shared(makeUsageReports);
}

function makeUsageReports({ deps }: EndpointContext): UsageReports {
  return new UsageReports(deps);
}
