import type { Command } from 'commander';
import { buildUsageReport } from '../render/usage-report.js';
import { ERROR_LOG_DAYS } from '../store/usage-repository.js';
import { findAccount } from './accounts.js';
import { withContext } from './cli-context.js';
import { printJson, printTable, UsageError } from './output.js';

export function usageCommand(program: Command): void {
  program
    .command('usage <username>')
    .description("an account's usage: requests and errors per day, share per service, recent errors")
    .option('--days <n>', 'days to report, 1-90', '30')
    .option('--json', 'machine-readable output')
    .action((username: string, options: { days: string; json?: boolean }) =>
      withContext(async (context) => {
        const days = Number(options.days);
        if (!Number.isInteger(days) || days < 1 || days > 90) throw new UsageError(`invalid --days "${options.days}": an integer from 1 to 90`);
        const account = await findAccount(context, username);
        const now = context.time.now();
        const rows = await context.store.usage.daily(account.id, context.time.day(now - (days - 1) * 86_400_000));
        const errors = await context.store.usage.errors(account.id, now - Math.min(days, ERROR_LOG_DAYS) * 86_400_000);
        const report = buildUsageReport(account, days, now, context.time, rows, errors);
        if (options.json) {
          printJson(report);
          return;
        }
        const total = report.daily.reduce((sum, day) => sum + day.requests, 0);
        const failed = report.daily.reduce((sum, day) => sum + day.errors, 0);
        console.log(`account ${report.account} (plan ${report.plan}), last ${days} days: ${total} requests, ${failed} errors`);
        printTable(report.daily.filter((day) => day.requests > 0), ['date', 'requests', 'errors']);
        console.log('');
        printTable(report.services.map((s) => ({ ...s, share: `${(s.share * 100).toFixed(1)}%` })), ['service', 'requests', 'share']);
        if (report.errors.length > 0) {
          console.log('');
          printTable(report.errors.slice(0, 20), ['at', 'service', 'http_status', 'error', 'count', 'path']);
        }
      }),
    );
}
