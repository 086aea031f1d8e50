/**
 * Which test files run, in what order, and how much of the machine each takes.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Files that keep the CPU busy (several servers, a browser, an install and a build): they count for more than one file. */
const WEIGHTS: Record<string, number> = {
  'test/deploy/dockerfile.test.ts': 2,
  'test/e2e/scale-out.test.ts': 2,
  'test/browser/board.test.ts': 2,
  'test/browser/pages.test.ts': 2,
  'test/browser/typography.test.ts': 2,
};

/**
 * Files that take longest start first, longest first (as `npm test` printed them), so the
 * run does not end waiting on one of them alone.
 */
const FIRST: string[] = [
  'test/e2e/memory.test.ts',
  'test/browser/board-tv.test.ts',
  'test/history/demo-start.test.ts',
  'test/history/backfill.test.ts',
  'test/deploy/dockerfile.test.ts',
  'test/cli/history.test.ts',
  'test/e2e/webhooks.test.ts',
  'test/e2e/scale-out.test.ts',
  'test/browser/board.test.ts',
  'test/fault/http-edges.test.ts',
  'test/e2e/usage-errors.test.ts',
  'test/e2e/manual-prices.test.ts',
  'test/e2e/access.test.ts',
  'test/access/redis-limiter.test.ts',
  'test/e2e/demo-account.test.ts',
  'test/browser/pages.test.ts',
  'test/stream/access.test.ts',
  'test/e2e/stream-access.test.ts',
  'test/cli/cli.test.ts',
  'test/client/client.test.ts',
  'test/e2e/failover.test.ts',
  'test/e2e/stream-alerts.test.ts',
  'test/cli/history-import-large.test.ts',
  'test/fault/database.test.ts',
  'test/fault/source-limits.test.ts',
  'test/browser/typography.test.ts',
];

/** Every test file: those under test/, and an endpoint's own beside its code under src/ (src/http/endpoints/<name>/<name>.test.ts). */
export function testFiles(root: string): string[] {
  return ['test', 'src']
    .flatMap((folder) =>
      (readdirSync(join(root, folder), { recursive: true }) as string[]).filter((path) => path.endsWith('.test.ts')).map((path) => join(folder, path)),
    )
    .sort();
}

export function weightOf(file: string): number {
  return WEIGHTS[file] ?? 1;
}

export function orderFiles(files: string[]): string[] {
  const rank = (file: string): number => {
    const index = FIRST.indexOf(file);
    return index === -1 ? FIRST.length : index;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
