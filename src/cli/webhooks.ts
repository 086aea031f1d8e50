import type { Command } from 'commander';
import { allowanceFor } from '../access/directory.js';
import { AlertRuleError, MAX_ALERT_RULES, parseAlertRules } from '../domain/alert-rule.js';
import { applyOverrides, type Plan } from '../domain/plan.js';
import type { Account } from '../store/account-repository.js';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../store/webhook-repository.js';
import { checkWebhookUrl } from '../webhooks/address.js';
import { newEndpointId, newSecret } from '../webhooks/events.js';
import { DEFAULT_LOG_LINES, endpointView, webhookOverview } from '../webhooks/overview.js';
import { findAccount } from './accounts.js';
import { withContext, type CliContext } from './cli-context.js';
import { printJson, printTable, UsageError } from './output.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function webhookCommands(program: Command): void {
  const webhooks = program.command('webhooks').description("manage an account's webhook endpoints (service alerts)");

  webhooks
    .command('add <username> <url>')
    .description('add an endpoint: alerts for its rules and, with --on, stale/recovered events; prints its signing secret once')
    .option('--rule <rule>', `an alert rule, <key><op><number> or <key>.change_percent<op><number> (op: > >= < <=); repeat for more (at most ${MAX_ALERT_RULES})`, collect, [])
    .option('--on <events>', `comma-separated events besides the rules' alerts: ${WEBHOOK_EVENTS.join(', ')}`)
    .option('--json', 'machine-readable output')
    .action((username: string, url: string, options: { rule: string[]; on?: string; json?: boolean }) =>
      withContext(async (context) => {
        const account = await findAccount(context, username);
        const plan = planOf(context, account);
        if (!plan.services.includes('alerts')) throw new UsageError(`account "${account.username}" is on plan "${plan.name}", which has no alerts service (webhooks need it)`);
        const count = await context.store.webhooks.count(account.id);
        if (count >= plan.max_webhooks) throw new UsageError(`account "${account.username}" has ${count} webhook endpoint${count === 1 ? '' : 's'}; its plan allows ${plan.max_webhooks}`);
        const rules = checkRules(context, account, plan, options.rule);
        const events = parseEvents(options.on);
        if (rules.length === 0 && events.length === 0) throw new UsageError('give at least one --rule or --on event: an endpoint without either would never be called');
        const refusal = await checkWebhookUrl(url, context.config.webhooks.allowPrivate);
        if (refusal) throw new UsageError(`refused URL "${url}": ${refusal}`);
        const secret = newSecret();
        const endpoint = await context.store.webhooks.create({ id: newEndpointId(), accountId: account.id, url, secret, rules, events });
        if (options.json) printJson({ ...endpointView(endpoint, context.time), username: account.username, secret });
        else {
          console.log(`webhook ${endpoint.id} added for ${account.username}: ${endpoint.url}`);
          console.log('its signing secret (store it now, it is not shown again):');
          console.log(secret);
        }
      }),
    );

  webhooks
    .command('list <username>')
    .description("list an account's endpoints (never their secrets)")
    .option('--json', 'machine-readable output')
    .action((username: string, options: { json?: boolean }) =>
      withContext(async (context) => {
        const account = await findAccount(context, username);
        const [endpoints, pending] = await Promise.all([context.store.webhooks.list(account.id), context.store.webhooks.pendingByEndpoint(account.id)]);
        const list = endpoints.map((endpoint) => endpointView(endpoint, context.time, pending.get(endpoint.id) ?? 0));
        if (options.json) printJson(list);
        else printTable(list.map((endpoint) => ({ ...endpoint, rules: endpoint.rules.join(' ') || '-', events: endpoint.events.join(',') || '-', state: endpoint.state === 'disabled' ? `disabled (${endpoint.disabled_reason ?? ''})` : endpoint.state })), ['id', 'state', 'url', 'rules', 'events', 'failing_since', 'pending', 'superseded', 'dropped']);
      }),
    );

  // Removing and enabling an endpoint are the same command but for what the store does and the word printed.
  const endpointActions = [
    { name: 'remove', description: 'remove an endpoint; its queued deliveries go with it', done: 'removed', act: (context: CliContext, accountId: string, id: string) => context.store.webhooks.remove(accountId, id) },
    { name: 'enable', description: 'enable an endpoint that was disabled after failing for 3 days (its secret is unchanged)', done: 'enabled', act: (context: CliContext, accountId: string, id: string) => context.store.webhooks.enable(accountId, id) },
  ];
  for (const { name, description, done, act } of endpointActions) {
    webhooks
      .command(`${name} <username> <id>`)
      .description(description)
      .action((username: string, id: string) =>
        withContext(async (context) => {
          const account = await findAccount(context, username);
          if (!(await act(context, account.id, id))) throw new UsageError(`account "${account.username}" has no webhook endpoint "${id}"`);
          console.log(`webhook ${id} ${done}`);
        }),
      );
  }

  webhooks
    .command('log <username>')
    .description("an account's delivery log, newest first: attempts, deliveries given up, superseded or dropped, endpoints disabled; each minute's events of one outcome to one endpoint are one line with a count")
    .option('--limit <n>', `lines at most (default ${DEFAULT_LOG_LINES})`)
    .option('--json', 'machine-readable output')
    .action((username: string, options: { limit?: string; json?: boolean }) =>
      withContext(async (context) => {
        const account = await findAccount(context, username);
        const limit = options.limit === undefined ? DEFAULT_LOG_LINES : Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError(`invalid --limit "${options.limit}": an integer from 1 to 10000`);
        const { deliveries } = await webhookOverview(context.store.webhooks, account.id, context.time, limit);
        if (options.json) printJson(deliveries);
        else
          printTable(
            deliveries.map((line) => ({ ...line, result: line.status_code !== null ? `HTTP ${line.status_code}` : line.error, ms: line.duration_ms })),
            ['at', 'endpoint', 'delivery', 'type', 'attempt', 'outcome', 'count', 'result', 'ms'],
          );
      }),
    );
}

function planOf(context: CliContext, account: Account): Plan {
  const base = context.plans.get(account.plan);
  if (!base) throw new UsageError(`account "${account.username}" is on plan "${account.plan}", which the config no longer has`);
  return applyOverrides(base, account.overrides);
}

/** Each rule parsed against the catalogue and held to the references the account may read; the error names the rule. */
function checkRules(context: CliContext, account: Account, plan: Plan, given: string[]): string[] {
  const allowance = allowanceFor(plan, account.references, context.catalogue);
  try {
    const rules = parseAlertRules(given, (name) => context.catalogue.lookup(name)?.key);
    for (const rule of rules) {
      if (allowance && !allowance.has(rule.key)) throw new AlertRuleError(rule.text, `reference "${rule.key}" is not among the references account "${account.username}" may read`);
    }
    return rules.map((rule) => rule.text);
  } catch (error) {
    if (error instanceof AlertRuleError) throw new UsageError(error.message);
    throw error;
  }
}

function parseEvents(list: string | undefined): WebhookEvent[] {
  if (list === undefined) return [];
  const events = list.split(',').map((s) => s.trim()).filter(Boolean);
  for (const event of events) if (!(WEBHOOK_EVENTS as readonly string[]).includes(event)) throw new UsageError(`unknown event "${event}" (events: ${WEBHOOK_EVENTS.join(', ')})`);
  return [...new Set(events)] as WebhookEvent[];
}
