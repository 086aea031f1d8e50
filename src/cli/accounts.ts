import type { Command } from 'commander';
import { SERVICES, type PlanOverrides, type Service } from '../domain/plan.js';
import type { Account } from '../store/account-repository.js';
import { withContext, type CliContext } from './cli-context.js';
import { printJson, printTable, UsageError } from './output.js';

export const USERNAME = /^[a-z0-9][a-z0-9_.-]{2,31}$/;

export function checkUsername(username: string): string {
  if (!USERNAME.test(username)) throw new UsageError(`invalid username "${username}": 3-32 characters of a-z, 0-9, "_", "." or "-", starting with a letter or digit`);
  return username;
}

export function checkPlan(context: CliContext, plan: string): string {
  if (!context.plans.has(plan)) throw new UsageError(`unknown plan "${plan}" (plans: ${[...context.plans.keys()].join(', ')})`);
  return plan;
}

export async function findAccount(context: CliContext, username: string): Promise<Account> {
  const account = await context.store.accounts.find(checkUsername(username));
  if (!account) throw new UsageError(`no account "${username}"`);
  return account;
}

function accountRow(account: Account) {
  return {
    username: account.username,
    plan: account.plan,
    status: account.status,
    references: account.references ? account.references.length : 'plan default',
    origins: account.origins ? account.origins.join(',') : 'any',
    overrides: account.overrides ? Object.entries(account.overrides).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : v}`).join(' ') : '',
  };
}

/** One readable line: "plan basic, status active, references 2, origins any, overrides requests_per_minute=100". */
function describeAccount(account: Account): string {
  const row = accountRow(account);
  return `plan ${row.plan}, status ${row.status}, references ${row.references}, origins ${row.origins}, overrides ${row.overrides || 'none'}`;
}

export function accountCommands(program: Command): void {
  const accounts = program.command('accounts').description('manage accounts');

  accounts
    .command('add <username>')
    .description('create an account on a plan')
    .requiredOption('--plan <plan>', 'plan name (see `nerkh plans list`)')
    .option('--json', 'machine-readable output')
    .action((username: string, options: { plan: string; json?: boolean }) =>
      withContext(async (context) => {
        checkUsername(username);
        checkPlan(context, options.plan);
        if (await context.store.accounts.find(username)) throw new UsageError(`account "${username}" already exists`);
        const account = await context.store.accounts.create(username, options.plan);
        context.changed('accounts');
        if (options.json) printJson(account);
        else console.log(`account ${account.username} created on plan ${account.plan}`);
      }),
    );

  accounts
    .command('list')
    .description('list accounts')
    .option('--json', 'machine-readable output')
    .action((options: { json?: boolean }) =>
      withContext(async (context) => {
        const list = await context.store.accounts.list();
        if (options.json) printJson(list);
        else printTable(list.map(accountRow), ['username', 'plan', 'status', 'references', 'origins', 'overrides']);
      }),
    );

  accounts
    .command('set <username>')
    .description('change an account: plan, status, selected references, allowed origins, plan overrides')
    .option('--plan <plan>', 'move to another plan')
    .option('--status <status>', 'active or suspended')
    .option('--references <keys>', 'comma-separated reference keys the account reads ("" for the plan default)')
    .option('--origins <origins>', 'comma-separated browser origins allowed ("" for any)')
    .option('--services <services>', `override: comma-separated services (${SERVICES.join(', ')})`)
    .option('--max-references <n>', 'override: reference limit, or "unlimited"')
    .option('--refresh-interval <seconds>', 'override: refresh interval in seconds (0 = live)')
    .option('--requests-per-minute <n>', 'override: requests per minute')
    .option('--requests-per-day <n>', 'override: requests per day, or "unlimited"')
    .option('--history-days <n>', 'override: days of history the account may read, or "unlimited"')
    .option('--max-streams <n>', 'override: push streams the account may hold open at once (0 = none)')
    .option('--max-webhooks <n>', 'override: webhook endpoints the account may register (0 = none)')
    .option('--clear-overrides', 'drop every per-account override')
    .option('--json', 'machine-readable output')
    .action((username: string, options: SetOptions) =>
      withContext(async (context) => {
        const account = await findAccount(context, username);
        const changes: Parameters<typeof context.store.accounts.update>[1] = {};
        if (options.plan !== undefined) changes.plan = checkPlan(context, options.plan);
        if (options.status !== undefined) {
          if (options.status !== 'active' && options.status !== 'suspended') throw new UsageError(`invalid status "${options.status}": active or suspended`);
          changes.status = options.status;
        }
        if (options.references !== undefined) changes.references = parseReferences(context, options.references);
        if (options.origins !== undefined) changes.origins = parseOrigins(options.origins);
        const newOverrides = parseOverrides(options, options.clearOverrides ? {} : { ...(account.overrides ?? {}) });
        if (newOverrides !== null) changes.overrides = Object.keys(newOverrides).length > 0 ? newOverrides : null;
        if (Object.keys(changes).length === 0) throw new UsageError('nothing to change: give at least one option (see --help)');

        const plan = context.plans.get(changes.plan ?? account.plan)!;
        const overrides = changes.overrides !== undefined ? changes.overrides : account.overrides;
        const limit = overrides && 'max_references' in overrides ? (overrides.max_references ?? null) : plan.max_references;
        const selected = changes.references ?? account.references;
        if (limit !== null && selected && selected.length > limit) throw new UsageError(`${selected.length} references selected but the plan allows ${limit}`);

        const updated = (await context.store.accounts.update(username, changes))!;
        context.changed('accounts');
        if (options.json) printJson(updated);
        else console.log(`account ${updated.username} updated: ${describeAccount(updated)}`);
      }),
    );
}

interface SetOptions {
  plan?: string;
  status?: string;
  references?: string;
  origins?: string;
  services?: string;
  maxReferences?: string;
  refreshInterval?: string;
  requestsPerMinute?: string;
  requestsPerDay?: string;
  historyDays?: string;
  maxStreams?: string;
  maxWebhooks?: string;
  clearOverrides?: boolean;
  json?: boolean;
}

function parseReferences(context: CliContext, list: string): string[] | null {
  const names = list.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) return null;
  const keys = names.map((name) => {
    const reference = context.catalogue.lookup(name);
    if (!reference) throw new UsageError(`unknown reference "${name}"`);
    return reference.key;
  });
  return [...new Set(keys)];
}

function parseOrigins(list: string): string[] | null {
  const origins = list.split(',').map((s) => s.trim()).filter(Boolean);
  if (origins.length === 0) return null;
  for (const origin of origins) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new UsageError(`invalid origin "${origin}": expected scheme://host[:port]`);
    }
    if (url.origin !== origin) throw new UsageError(`invalid origin "${origin}": expected exactly ${url.origin}`);
  }
  return origins;
}

/** The plan numbers `accounts set` overrides: the option, where it lands, its least value, and whether it may be "unlimited" (null). */
const COUNT_OVERRIDES = [
  { option: '--max-references', from: 'maxReferences', field: 'max_references', min: 1, unlimited: true },
  { option: '--refresh-interval', from: 'refreshInterval', field: 'refresh_interval_seconds', min: 0, unlimited: false },
  { option: '--requests-per-minute', from: 'requestsPerMinute', field: 'requests_per_minute', min: 1, unlimited: false },
  { option: '--requests-per-day', from: 'requestsPerDay', field: 'requests_per_day', min: 1, unlimited: true },
  { option: '--history-days', from: 'historyDays', field: 'history_days', min: 0, unlimited: true },
  { option: '--max-streams', from: 'maxStreams', field: 'max_streams', min: 0, unlimited: false },
  { option: '--max-webhooks', from: 'maxWebhooks', field: 'max_webhooks', min: 0, unlimited: false },
] as const satisfies readonly { option: string; from: keyof SetOptions; field: keyof PlanOverrides; min: number; unlimited: boolean }[];

/** Per-account plan overrides; null when no override option was given. */
function parseOverrides(options: SetOptions, base: PlanOverrides): PlanOverrides | null {
  let touched = options.clearOverrides === true;
  const count = (name: string, raw: string | undefined, min: number, unlimited: boolean): number | null | undefined => {
    if (raw === undefined) return undefined;
    touched = true;
    if (unlimited && raw === 'unlimited') return null;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new UsageError(`invalid ${name} "${raw}": expected an integer ≥ ${min}${unlimited ? ' or "unlimited"' : ''}`);
    return value;
  };
  for (const { option, from, field, min, unlimited } of COUNT_OVERRIDES) {
    const value = count(option, options[from], min, unlimited);
    if (value !== undefined) (base as Record<string, number | null>)[field] = value;
  }
  if (options.services !== undefined) {
    touched = true;
    const services = options.services.split(',').map((s) => s.trim()).filter(Boolean);
    for (const service of services) if (!SERVICES.includes(service as Service)) throw new UsageError(`unknown service "${service}" (services: ${SERVICES.join(', ')})`);
    base.services = services as Service[];
  }
  return touched ? base : null;
}
