import type { ZoneTime } from '../domain/time.js';
import type { UsageErrorEntry } from '../store/usage-repository.js';

export interface UsageReport {
  account: string;
  plan: string;
  daily: { date: string; requests: number; errors: number }[];
  services: { service: string; requests: number; share: number }[];
  /** One entry per service, error and minute; `at`, `path` and `http_status` are the latest of its `count` failures. */
  errors: { at: string; service: string; path: string; http_status: number; error: string; count: number }[];
}

/**
 * Shape stored counts into the report: one row per day of the range (zero
 * days included, oldest first), each service's share of all requests, and the
 * error log newest first (each entry folds one minute's repeats of one error
 * on one service). `requests` counts every request, failed or not.
 */
export function buildUsageReport(
  account: { username: string; plan: string },
  days: number,
  now: number,
  time: ZoneTime,
  rows: { day: string; service: string; ok: number; errors: number }[],
  errors: UsageErrorEntry[],
): UsageReport {
  const dates: string[] = [];
  for (let i = days - 1; i >= 0; i--) dates.push(time.day(now - i * 86_400_000));
  const perDay = new Map(dates.map((date) => [date, { date, requests: 0, errors: 0 }]));
  const perService = new Map<string, number>();
  let total = 0;
  for (const row of rows) {
    const day = perDay.get(row.day);
    if (!day) continue;
    day.requests += row.ok + row.errors;
    day.errors += row.errors;
    perService.set(row.service, (perService.get(row.service) ?? 0) + row.ok + row.errors);
    total += row.ok + row.errors;
  }
  const services = [...perService.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([service, requests]) => ({ service, requests, share: total === 0 ? 0 : Math.round((requests / total) * 10_000) / 10_000 }));
  return {
    account: account.username,
    plan: account.plan,
    daily: [...perDay.values()],
    services,
    errors: errors.map((e) => ({ at: time.format(e.at), service: e.service, path: e.path, http_status: e.http_status, error: e.error, count: e.count })),
  };
}
