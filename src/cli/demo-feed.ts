import type { Command } from 'commander';
import { loadCatalogue } from '../catalogue/load.js';
import { demoSources, loadConfig } from '../config.js';
import { DemoFeeder } from '../demo/feeder.js';

export function demoFeedCommand(program: Command): void {
  program
    .command('demo-feed')
    .description('run only the demo feeder: keep the three demo source files under $NERKH_DATA_DIR/demo moving')
    .action(async () => {
      const config = loadConfig();
      const sources = demoSources(config.dataDir);
      const feeder = new DemoFeeder(sources, Math.random, (line) => console.log(line), loadCatalogue(config.cataloguePath));
      feeder.start();
      console.log(`demo feeder writing ${sources.map((s) => s.path).join(', ')} (Ctrl-C to stop)`);
      const keepAlive = setInterval(() => {}, 60_000);
      const stop = () => {
        clearInterval(keepAlive);
        feeder.stop();
        process.exit(0);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
}
