// Bundles the service from its TypeScript (src/) into dist/bundle/: the command,
// the three worker threads' entry files and the tick settler, with the code they
// share split into chunks. esbuild strips the types itself, so the build takes a
// second rather than a `tsc` emit's twelve; the types are checked by
// `npm run typecheck` and by `npm test`, not by the build. A process then loads a few dozen files instead of some 900
// (kysely and typebox alone are 500 ES modules), which halves the CPU a server
// spends before it listens and an admin command spends in all (docs/performance.md).
//
// Left outside the bundle, loaded from node_modules as before: packages that find
// files beside their own code while running (worker files, static assets, their
// package.json) or load native code. The build fails if anything bundled still
// asks for __dirname or __filename, which an ES module bundle does not have.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const OUT = 'dist/bundle';
const EXTERNAL = ['better-sqlite3', 'pg', 'pg-native', 'piscina', 'pino', 'ioredis', '@fastify/swagger', '@fastify/swagger-ui'];

rmSync(OUT, { recursive: true, force: true });
await build({
  entryPoints: ['src/cli/main.ts', 'src/sources/parse-worker.ts', 'src/history/answers/render-worker.ts', 'src/history/ranges/read-worker.ts', 'src/settle-next-tick.ts'],
  // Flat: a worker's file is found beside the chunk that starts it (`new URL('./parse-worker.js', import.meta.url)`).
  entryNames: '[name]',
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  sourcemap: true,
  logLevel: 'warning',
  // CommonJS packages inside the bundle call require() for Node's own modules.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
});

const asking = readdirSync(OUT)
  .filter((name) => name.endsWith('.js'))
  .filter((name) => /\b__(dirname|filename)\b(?!\s*[:=])/.test(readFileSync(join(OUT, name), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')));
if (asking.length > 0) {
  console.error(`bundle: ${asking.join(', ')} use __dirname or __filename; add the package that does to EXTERNAL in scripts/bundle.js`);
  process.exit(1);
}
