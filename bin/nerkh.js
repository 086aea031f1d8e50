#!/usr/bin/env node
// Entry point of the `nerkh` command. `npm ci` builds dist/ (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(compiled)) {
  console.error('nerkh: dist/ is missing; run `npm ci` (or `npm run build`) first.');
  process.exit(1);
}
await import(pathToFileURL(compiled).href);
