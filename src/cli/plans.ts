import type { Command } from 'commander';
import { referenceContext } from './context.js';
import { printJson, printTable } from './output.js';

export function planCommands(program: Command): void {
  const plans = program.command('plans').description('plans (defaults merged with the config file)');
  plans
    .command('list')
    .description('list plans')
    .option('--json', 'machine-readable output')
    .action((options: { json?: boolean }) =>
      {
        const list = [...referenceContext().plans.values()];
        if (options.json) {
          printJson(list);
          return;
        }
        printTable(
          list.map((plan) => ({
            plan: plan.name,
            services: plan.services.join(','),
            max_references: plan.max_references ?? 'unlimited',
            refresh_s: plan.refresh_interval_seconds,
            per_minute: plan.requests_per_minute,
            per_day: plan.requests_per_day ?? 'unlimited',
            history_days: plan.history_days ?? 'unlimited',
          })),
          ['plan', 'services', 'max_references', 'refresh_s', 'per_minute', 'per_day', 'history_days'],
        );
      },
    );
}
