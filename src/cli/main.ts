import cluster from 'node:cluster';
import { Command, CommanderError } from 'commander';
import { CatalogueError } from '../catalogue/load.js';
import { ConfigError, loadConfig } from '../config.js';
import { ROLES, type Role } from '../roles/role.js';
import { ListenError } from '../runtime/listen-error.js';
import { describeStoreError, StoreUnavailableError } from '../store/errors.js';
import { accountCommands } from './accounts.js';
import { describeSetup } from './context.js';
import { demoFeedCommand } from './demo-feed.js';
import { historyCommands } from './history.js';
import { keyCommands } from './keys.js';
import { SetupError, UsageError } from './output.js';
import { planCommands } from './plans.js';
import { priceCommands } from './prices.js';
import { usageCommand } from './usage.js';
import { webhookCommands } from './webhooks.js';

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
  .option('--role <role>', `what this process does: ${ROLES.join(', ')} (api: serve only; ingest: read the sources and publish, when leader)`, 'all')
  .option('--workers <n>', 'run N serving processes on this host (N > 1 needs NERKH_REDIS_URL)', '1')
  .action(async (options: { role: string; workers: string }) => {
    if (!(ROLES as readonly string[]).includes(options.role)) throw new UsageError(`invalid --role "${options.role}": ${ROLES.join(', ')}`);
    const workers = Number(options.workers);
    if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new UsageError(`invalid --workers "${options.workers}": an integer from 1 to 64`);
    const role = options.role as Role;
    // Several processes must share limits, snapshots and notices, and a role apart has others to share with: only Redis lets them.
    const needsRedis = workers > 1 ? '--workers' : role !== 'all' ? `--role ${role}` : null;
    if (needsRedis && cluster.isPrimary && !loadConfig().redisUrl) {
      throw new SetupError(`${needsRedis} needs NERKH_REDIS_URL (nodes share limits and snapshots through Redis)`);
    }
    if (workers > 1 && cluster.isPrimary) {
      const { runWorkers } = await import('../workers.js');
      await runWorkers(workers, process.argv.slice(2));
      return;
    }
    const { serve } = await import('../server.js');
    await serve(role);
  });
accountCommands(program);
keyCommands(program);
planCommands(program);
priceCommands(program);
usageCommand(program);
historyCommands(program);
webhookCommands(program);
demoFeedCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof UsageError || error instanceof SetupError || error instanceof ConfigError || error instanceof CatalogueError || error instanceof StoreUnavailableError || error instanceof ListenError) {
    console.error(`nerkh: ${error.message}`);
    process.exit(error instanceof UsageError ? 1 : 2);
  }
  // A database failing mid-command (a dropped connection, a lock) is one line too, never a stack.
  const coded = typeof (error as { code?: unknown })?.code === 'string' || error instanceof AggregateError;
  console.error(`nerkh: ${coded ? `database error: ${describeStoreError(error)}` : ((error as Error).message ?? String(error))}`);
  process.exit(1);
}
