import { join } from 'node:path';

/** The embedded database's file in a data directory (kept apart from the driver, so a command can name it without loading one). */
export function sqliteFileIn(dataDir: string): string {
  return join(dataDir, 'nerkh.sqlite');
}
