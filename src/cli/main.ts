import { Command, CommanderError } from 'commander';
import { CatalogueError } from '../catalogue/load.js';
import { ConfigError, loadConfig } from '../config.js';
import { describeStoreError, StoreUnavailableError } from '../store/errors.js';
import { accountCommands } from './accounts.js';
import { describeSetup } from './context.js';
import { demoFeedCommand } from './demo-feed.js';
import { historyCommands } from './history.js';
import { keyCommands } from './keys.js';
import { UsageError } from './output.js';
import { planCommands } from './plans.js';
import { usageCommand } from './usage.js';

const program = new Command('nerkh')
  .description('Nerkh market rates service')
  .showHelpAfterError(false)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text.split('\n')[0]!.replace(/^error: /, 'nerkh: ') + '\n') })
  .addHelpText('after', () => {
    let setup: string;
    try {
      setup = describeSetup(loadConfig());
    } catch (error) {
      setup = `configuration error: ${(error as Error).message}`;
    }
    return `\nEvery command, \`serve\` included, reads the same setup (set NERKH_CONFIG, NERKH_DATA_DIR or NERKH_DATABASE_URL to change it):\n${setup}`;
  });

program
  .command('serve')
  .description('run the HTTP service (config: NERKH_CONFIG or ./nerkh.config.json, else the built-in demo)')
  .action(async () => {
    const { serve } = await import('../server.js');
    await serve();
  });
accountCommands(program);
keyCommands(program);
planCommands(program);
usageCommand(program);
historyCommands(program);
demoFeedCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof CatalogueError || error instanceof StoreUnavailableError) {
    console.error(`nerkh: ${error.message}`);
    process.exit(error instanceof UsageError ? 1 : 2);
  }
  // A database failing mid-command (a dropped connection, a lock) is one line too, never a stack.
  const coded = typeof (error as { code?: unknown })?.code === 'string' || error instanceof AggregateError;
  console.error(`nerkh: ${coded ? `database error: ${describeStoreError(error)}` : ((error as Error).message ?? String(error))}`);
  process.exit(1);
}
