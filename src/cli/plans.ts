import type { Command } from 'commander';
import type { Plan } from '../domain/plan.js';
import { referenceContext } from './cli-context.js';
import { printJson } from './output.js';

export function planCommands(program: Command): void {
  const plans = program.command('plans').description('plans (defaults merged with the config file)');
  plans
    .command('list')
    .description('list plans with every field, named as in the config file')
    .option('--json', 'machine-readable output')
    .action((options: { json?: boolean }) => {
      const list = [...referenceContext().plans.values()];
      if (options.json) printJson(list);
      else console.log(list.map(describePlan).join('\n\n'));
    });
}

/**
 * One plan as a block of `field  value` lines, every field of the plan (so one
 * added later shows too), under the names the config file's `plans` uses.
 */
function describePlan(plan: Plan): string {
  const fields = Object.entries(plan).filter(([field]) => field !== 'name');
  const width = Math.max(...fields.map(([field]) => field.length));
  return [`plan ${plan.name}`, ...fields.map(([field, value]) => `  ${field.padEnd(width)}  ${show(field, value)}`)].join('\n');
}

function show(field: string, value: unknown): string {
  if (value === null) return 'unlimited';
  if (field === 'default_references' && Array.isArray(value)) return value.length <= 5 ? value.join(', ') || '(none)' : `${value.length} (${value.slice(0, 3).join(', ')}, …)`;
  if (Array.isArray(value)) return value.join(', ') || '(none)';
  if (value === 0 && field === 'max_streams') return '0 (no streams)';
  if (value === 0 && field === 'max_webhooks') return '0 (no webhooks)';
  if (value === 0 && field === 'history_days') return '0 (today only)';
  if (value === 0 && field === 'refresh_interval_seconds') return '0 (live)';
  return String(value);
}
