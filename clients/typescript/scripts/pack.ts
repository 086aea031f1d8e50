/**
 * `npm run tarball -w @nerkh/client [-- <folder>]`: packs the built client
 * into `nerkh-client-<version>.tgz` (in the working folder, or the one given)
 * with its runtime dependencies inside, so `npm install <file>.tgz` works in
 * any project, offline included, and fetches nothing.
 *
 * Why not `npm pack` alone: it leaves dependencies out, and its
 * `bundleDependencies` finds none in a workspace, whose dependencies npm
 * keeps in the root's node_modules. So the package is staged in a temporary
 * folder with those dependencies copied under its own node_modules, and
 * packed from there.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Manifest {
  name: string;
  version: string;
  files?: string[];
  dependencies?: Record<string, string>;
  bundleDependencies?: string[];
}

const CLIENT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as Manifest;

/** The folder Node would load `name` from, looking up from `from` as `require` does. */
function installedAt(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed (run npm ci at the repository's root)`);
  }
}

/** Every package `dependencies` needs at run time, by name, with the folder it is installed in. */
function runtimePackages(dependencies: Record<string, string>, from: string, found = new Map<string, string>()): Map<string, string> {
  for (const name of Object.keys(dependencies)) {
    if (found.has(name)) continue;
    const dir = installedAt(name, from);
    found.set(name, dir);
    const own = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    runtimePackages(own.dependencies ?? {}, dir, found);
  }
  return found;
}

if (!existsSync(join(CLIENT, 'dist', 'index.js'))) throw new Error('clients/typescript/dist is missing: run npm run build at the repository root first');
const destination = resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2] ?? '.');
const staging = mkdtempSync(join(tmpdir(), 'nerkh-client-pack-'));
try {
  for (const entry of [...(manifest.files ?? []), 'README.md']) cpSync(join(CLIENT, entry), join(staging, entry), { recursive: true });
  const dependencies = manifest.dependencies ?? {};
  for (const [name, dir] of runtimePackages(dependencies, CLIENT)) {
    cpSync(dir, join(staging, 'node_modules', name), { recursive: true, dereference: true, filter: (path) => !path.slice(dir.length).includes('/node_modules/') });
  }
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ ...manifest, bundleDependencies: Object.keys(dependencies) }, null, 2)}\n`);
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: staging, encoding: 'utf8' }).trim().split('\n').pop()!;
  console.log(join(destination, packed));
} finally {
  rmSync(staging, { recursive: true, force: true });
}
