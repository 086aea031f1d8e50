import type { Command } from 'commander';

/** Adds one group of commands (`accounts`, `keys`, …) to the program. */
type Register = (program: Command) => void;

/**
 * Every command group, loaded only when asked for: an admin command pays for
 * the modules it uses (its store, its config checks), not for the server's or
 * the other commands', so it answers in a fraction of a second. The order is
 * the order `nerkh --help` lists them in.
 */
export const COMMAND_GROUPS: Record<string, () => Promise<Register>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  accounts: async () => (await import('./accounts.js')).accountCommands,
  keys: async () => (await import('./keys.js')).keyCommands,
  plans: async () => (await import('./plans.js')).planCommands,
  prices: async () => (await import('./prices.js')).priceCommands,
  calendar: async () => (await import('./calendar.js')).calendarCommands,
  usage: async () => (await import('./usage.js')).usageCommand,
  history: async () => (await import('./history.js')).historyCommands,
  webhooks: async () => (await import('./webhooks.js')).webhookCommands,
  'demo-feed': async () => (await import('./demo-feed.js')).demoFeedCommand,
};

/**
 * The groups a command line needs: the one it names, or every group when it
 * names none (`nerkh`, `nerkh --help`, a mistyped command), so the help and
 * commander's "did you mean" see them all.
 */
export function groupsFor(argv: readonly string[]): string[] {
  const named = argv.find((argument) => !argument.startsWith('-'));
  return named !== undefined && named in COMMAND_GROUPS ? [named] : Object.keys(COMMAND_GROUPS);
}
