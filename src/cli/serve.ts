import cluster from 'node:cluster';
import type { Command } from 'commander';
import { ROLES, type Role } from '../roles/role.js';
import { SetupError, UsageError } from './output.js';

export function serveCommand(program: Command): void {
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
      if (needsRedis && cluster.isPrimary) {
        const { loadConfig } = await import('../config.js');
        if (!loadConfig().redisUrl) throw new SetupError(`${needsRedis} needs NERKH_REDIS_URL (nodes share limits and snapshots through Redis)`);
      }
      if (workers > 1 && cluster.isPrimary) {
        const { runWorkers } = await import('../workers.js');
        await runWorkers(workers, process.argv.slice(2));
        return;
      }
      const { serve } = await import('../server.js');
      await serve(role);
    });
}
