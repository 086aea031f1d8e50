import { loadConfig } from '../config.js';
import { describeSetup } from './cli-context.js';

/** The end of `nerkh --help`: where every command looks, so a wrong directory shows before it bites. */
export function setupHelp(): string {
  let setup: string;
  try {
    setup = describeSetup(loadConfig());
  } catch (error) {
    setup = `configuration error: ${(error as Error).message}`;
  }
  return `\nEvery command, \`serve\` included, reads the same setup (set NERKH_CONFIG, NERKH_DATA_DIR or NERKH_DATABASE_URL to change it):\n${setup}`;
}
