import type { Command } from 'commander';
import type { AppConfig } from '../config.js';
import type { Reference } from '../domain/reference.js';
import { DROP_REASON_TEXT } from '../sources/drops.js';
import { readPriceText } from '../sources/formats/price-text.js';
import type { ManualPrice } from '../store/manual-price-repository.js';
import { withContext, type CliContext } from './cli-context.js';
import { parseExpiry } from './keys.js';
import { printJson, printTable, UsageError } from './output.js';

const MAX_NOTE = 200;

/**
 * The value of `nerkh prices set`, read as a source's price text is (grouping
 * separators, Persian or Arabic-Indic digits, `٫`): a decimal above zero, its
 * digits kept (`71.250` stays `71.250`) and never read through a float.
 */
export function readManualValue(text: string): string {
  const reading = readPriceText(text);
  if ('text' in reading) return reading.text;
  if (reading.drop === 'not_positive') throw new UsageError(`invalid value "${text}": a price must be above zero`);
  throw new UsageError(`invalid value "${text}": ${DROP_REASON_TEXT[reading.drop]}; write a decimal number above zero, such as 1125050000, 1,125,050,000, ۱۱۲۵۰۵۰۰۰۰ or 71.25`);
}

/** The manual source a command works on: the one named, or the only one the config has. */
export function chooseManualSource(config: AppConfig, named: string | undefined): string {
  const manual = config.sources.filter((source) => source.type === 'manual').map((source) => source.name);
  if (named !== undefined) {
    if (manual.includes(named)) return named;
    throw new UsageError(`no manual source "${named}" in the config${manual.length > 0 ? ` (manual sources: ${manual.join(', ')})` : ''}`);
  }
  if (manual.length === 1) return manual[0]!;
  if (manual.length === 0) {
    throw new UsageError(`the config has no manual source; add {"name": "desk", "type": "manual"} to its sources (config: ${config.configPath ?? 'none, the built-in demo setup'})`);
  }
  throw new UsageError(`the config has several manual sources (${manual.join(', ')}): name one with --source`);
}

function findReference(context: CliContext, name: string): Reference {
  const reference = context.catalogue.lookup(name);
  if (!reference) throw new UsageError(`unknown reference "${name}"`);
  return reference;
}

/** A value outside the reference's sanity band would never be served: refused here rather than set to no effect. */
function checkBand(reference: Reference, value: string): void {
  const number = Number(value);
  if ((reference.min === null || number >= reference.min) && (reference.max === null || number <= reference.max)) return;
  const band = `${reference.min ?? 'any'} to ${reference.max ?? 'any'} ${reference.currency} per ${reference.per}`;
  throw new UsageError(`value ${value} is outside the plausible range of ${reference.key} (${band}); it would never be served`);
}

function checkNote(note: string | undefined): string | null {
  if (note === undefined) return null;
  if (note.length > MAX_NOTE) throw new UsageError(`--note is longer than ${MAX_NOTE} characters`);
  return note;
}

/** Whether a price serves as fresh now: `expired` past its expiry, `stale` past its source's max age. */
function stateOf(price: ManualPrice, config: AppConfig, now: number): 'fresh' | 'expired' | 'stale' {
  if (price.expires_at !== null && now >= price.expires_at) return 'expired';
  const maxAge = config.sources.find((source) => source.name === price.source)?.max_age_seconds ?? Infinity;
  return now - price.set_at > maxAge * 1000 ? 'stale' : 'fresh';
}

export function priceCommands(program: Command): void {
  const prices = program.command('prices').description('prices set by hand on a manual source (a source of type "manual")');

  prices
    .command('set <reference> <value>')
    .description('set the price a manual source serves for a reference (key or alias); every node serves it within 2 s')
    .option('--source <name>', 'the manual source (needed only when the config has several)')
    .option('--expires <when>', 'when the price stops being fresh: a span like 2h, 30m, 1d, an ISO date or date-time (default: never)')
    .option('--note <text>', 'why, for the log')
    .option('--json', 'machine-readable output')
    .action((name: string, text: string, options: { source?: string; expires?: string; note?: string; json?: boolean }) =>
      withContext(async (context) => {
        const source = chooseManualSource(context.config, options.source);
        const reference = findReference(context, name);
        const value = readManualValue(text);
        checkBand(reference, value);
        const note = checkNote(options.note);
        const expiresAt = options.expires === undefined ? null : parseExpiry(options.expires, context.time);
        const price = await context.store.manualPrices.set(source, reference.key, { value, expiresAt, note });
        context.changed('prices');
        const expiry = price.expires_at === null ? null : context.time.format(price.expires_at);
        if (options.json) printJson({ source, reference: reference.key, value, set_at: context.time.format(price.set_at), expires_at: expiry, note });
        else console.log(`${source}: ${reference.key} set to ${value} ${reference.currency} per ${reference.per}, ${expiry === null ? 'with no expiry' : `fresh until ${expiry}`}`);
      }),
    );

  prices
    .command('clear <reference>')
    .description('remove the price a manual source serves for a reference; the next source in priority takes over')
    .option('--source <name>', 'the manual source (needed only when the config has several)')
    .option('--note <text>', 'why, for the log')
    .option('--json', 'machine-readable output')
    .action((name: string, options: { source?: string; note?: string; json?: boolean }) =>
      withContext(async (context) => {
        const source = chooseManualSource(context.config, options.source);
        const reference = findReference(context, name);
        const cleared = await context.store.manualPrices.clear(source, reference.key, checkNote(options.note));
        if (cleared) context.changed('prices');
        if (options.json) printJson({ source, reference: reference.key, cleared });
        else console.log(cleared ? `${source}: ${reference.key} cleared` : `${source}: ${reference.key} had no price; nothing changed`);
      }),
    );

  prices
    .command('list')
    .description('the prices set by hand now, with whether each is still fresh')
    .option('--source <name>', 'only this manual source')
    .option('--json', 'machine-readable output')
    .action((options: { source?: string; json?: boolean }) =>
      withContext(async (context) => {
        const source = options.source === undefined ? undefined : chooseManualSource(context.config, options.source);
        const now = context.time.now();
        const at = (ms: number | null) => (ms === null ? null : context.time.format(ms));
        const rows = (await context.store.manualPrices.current(source)).map((price) => ({
          source: price.source,
          reference: price.reference,
          value: price.value,
          state: stateOf(price, context.config, now),
          set_at: at(price.set_at),
          expires_at: at(price.expires_at),
          note: price.note,
        }));
        if (options.json) printJson(rows);
        else printTable(rows, ['source', 'reference', 'value', 'state', 'set_at', 'expires_at', 'note']);
      }),
    );

  prices
    .command('log')
    .description('every change to prices set by hand, newest first')
    .option('--reference <name>', 'only this reference (key or alias)')
    .option('--source <name>', 'only this manual source')
    .option('--limit <n>', 'at most this many entries (1 to 1000)', '100')
    .option('--json', 'machine-readable output')
    .action((options: { reference?: string; source?: string; limit: string; json?: boolean }) =>
      withContext(async (context) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError(`invalid --limit "${options.limit}": an integer from 1 to 1000`);
        const reference = options.reference === undefined ? undefined : findReference(context, options.reference).key;
        const source = options.source === undefined ? undefined : chooseManualSource(context.config, options.source);
        const at = (ms: number | null) => (ms === null ? null : context.time.format(ms));
        const rows = (await context.store.manualPrices.log({ reference, source, limit })).map((change) => ({
          at: at(change.at),
          source: change.source,
          reference: change.reference,
          action: change.action,
          value: change.value,
          expires_at: at(change.expires_at),
          note: change.note,
        }));
        if (options.json) printJson(rows);
        else printTable(rows, ['at', 'source', 'reference', 'action', 'value', 'expires_at', 'note']);
      }),
    );
}
