#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=25
// Entry point of the `nerkh` command. `npm ci` builds dist/ (the `prepare` script).
// The 4 MB young generation and a 25% old-generation growth step keep a busy server's RSS
// near its idle size at no measured cost in throughput (see docs/performance.md);
// `npm start` passes the same flags.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

// dist/bundle/ is the compiled service bundled into a few files (scripts/bundle.js says why).
const compiled = fileURLToPath(new URL('../dist/bundle/main.js', import.meta.url));
if (!existsSync(compiled)) {
  console.error('nerkh: dist/ is missing; run `npm ci` (or `npm run build`) first.');
  process.exit(1);
}
// The service first makes process.nextTick hot, before anything else queues ticks (src/settle-next-tick.ts says why).
if (process.argv[2] === 'serve') await (await import(new URL('../dist/bundle/settle-next-tick.js', import.meta.url).href)).settleNextTick();
await import(pathToFileURL(compiled).href);
