import type { Command } from 'commander';
import { asciiDigits } from '../domain/digits.js';
import { isCalendarDate, parseIsoDateTime, type ZoneTime } from '../domain/time.js';
import { findAccount } from './accounts.js';
import { withContext } from './cli-context.js';
import { printJson, printTable, UsageError } from './output.js';

/**
 * `--expires`: a span from now (30d, 12h, 90m), an ISO date (00:00 of that day in the
 * configured zone), or a date-time (with a zone, or in the configured zone without one).
 */
export function parseExpiry(written: string, time: ZoneTime, now = Date.now()): number {
  // Persian or Arabic-Indic digits read as ASCII ones, as in every date the API takes.
  const text = asciiDigits(written);
  const span = /^(\d{1,6})([mhd])$/.exec(text);
  let at: number | null = null;
  if (span) {
    if (Number(span[1]) < 1) throw new UsageError(`invalid --expires "${written}": a span must be at least 1`);
    at = now + Number(span[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[span[2] as 'm' | 'h' | 'd'];
  } else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const [year, month, day] = text.split('-').map(Number) as [number, number, number];
    if (isCalendarDate(year, month, day)) at = time.startOfDay(year, month, day);
  } else {
    const parsed = parseIsoDateTime(text, false);
    if (parsed) at = parsed.hasZone ? parsed.ms : parsed.ms - time.offsetMinutes(parsed.ms) * 60_000;
  }
  if (at === null) throw new UsageError(`invalid --expires "${written}": use an ISO date (2027-01-31), a date-time (2027-01-31T12:00:00+03:30), or a span like 30d, 12h, 90m`);
  if (at <= now) throw new UsageError(`--expires ${written} is in the past`);
  return at;
}

export function keyCommands(program: Command): void {
  const keys = program.command('keys').description('manage API keys');

  keys
    .command('issue <username>')
    .description('issue a new API key (printed once; only its hash is stored)')
    .option('--label <label>', 'a note to tell keys apart')
    .option('--expires <when>', 'expiry: ISO date, date-time, or span like 30d')
    .option('--json', 'machine-readable output')
    .action((username: string, options: { label?: string; expires?: string; json?: boolean }) =>
      withContext(async (context) => {
        const account = await findAccount(context, username);
        if (options.label !== undefined && options.label.length > 100) throw new UsageError('--label is longer than 100 characters');
        const expiresAt = options.expires === undefined ? null : parseExpiry(options.expires, context.time);
        const issued = await context.store.keys.issue(account.id, { label: options.label ?? null, expiresAt });
        context.changed('keys');
        if (options.json) {
          printJson({ id: issued.id, key: issued.key, username: account.username, label: issued.label, created_at: context.time.format(issued.created_at), expires_at: issued.expires_at === null ? null : context.time.format(issued.expires_at) });
        } else {
          console.log(`key ${issued.id} issued for ${account.username}; store it now, it is not shown again:`);
          console.log(issued.key);
        }
      }),
    );

  keys
    .command('list <username>')
    .description("list an account's keys (never the keys themselves)")
    .option('--json', 'machine-readable output')
    .action((username: string, options: { json?: boolean }) =>
      withContext(async (context) => {
        const account = await findAccount(context, username);
        const at = (ms: number | null) => (ms === null ? null : context.time.format(ms));
        const list = (await context.store.keys.list(account.id)).map((key) => ({
          id: key.id,
          label: key.label,
          created_at: at(key.created_at),
          last_used_at: at(key.last_used_at),
          expires_at: at(key.expires_at),
          revoked_at: at(key.revoked_at),
          state: key.revoked_at !== null ? 'revoked' : key.expires_at !== null && key.expires_at <= context.time.now() ? 'expired' : 'active',
        }));
        if (options.json) printJson(list);
        else printTable(list, ['id', 'label', 'state', 'created_at', 'last_used_at', 'expires_at']);
      }),
    );

  keys
    .command('revoke <key-id>')
    .description('revoke a key by its public id (key_…)')
    .option('--json', 'machine-readable output')
    .action((id: string, options: { json?: boolean }) =>
      withContext(async (context) => {
        const key = await context.store.keys.find(id);
        if (!key) throw new UsageError(`no key "${id}"`);
        const revoked = await context.store.keys.revoke(id);
        context.changed('keys');
        if (options.json) printJson({ id, revoked: true, already_revoked: !revoked });
        else console.log(revoked ? `key ${id} revoked` : `key ${id} was already revoked`);
      }),
    );
}
