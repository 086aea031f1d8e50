import { Command, CommanderError } from 'commander';
import { COMMAND_GROUPS, groupsFor } from './commands.js';
import { SetupError, UsageError } from './output.js';

const program = new Command('nerkh')
  .description('Nerkh market rates service')
  .showHelpAfterError(false)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text.split('\n')[0]!.replace(/^error: /, 'nerkh: ') + '\n') });

const args = process.argv.slice(2);
const groups = groupsFor(args);
for (const group of groups) (await COMMAND_GROUPS[group]!())(program);
// Only the whole program's help names the setup; reading it loads the config and store modules, which nothing else here needs.
if (groups.length > 1) {
  const { setupHelp } = await import('./setup-help.js');
  program.addHelpText('after', setupHelp);
}

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  const { isOperatorError, describeStoreError } = await import('./operator-errors.js');
  if (error instanceof UsageError || error instanceof SetupError || isOperatorError(error)) {
    console.error(`nerkh: ${(error as Error).message}`);
    process.exit(error instanceof UsageError ? 1 : 2);
  }
  // A database failing mid-command (a dropped connection, a lock) is one line too, never a stack.
  const coded = typeof (error as { code?: unknown })?.code === 'string' || error instanceof AggregateError;
  console.error(`nerkh: ${coded ? `database error: ${describeStoreError(error)}` : ((error as Error).message ?? String(error))}`);
  process.exit(1);
}
