/**
 * The suite runs compiled: one `tsc` emits every TypeScript file of the
 * project (and type-checks it, which `npm test` needs anyway) into a copy of
 * the checkout, and each test file then runs as plain JavaScript. Loading a
 * file through tsx's module hooks cost each test process 0.5–2 s of CPU (every
 * module of `src/` and `node_modules` resolved through the hooks' thread):
 * across the suite, minutes of CPU on a 2-core machine.
 *
 * The copy (under node_modules/.cache, so `npm ci` starts it afresh) holds a
 * hard link to every file of the checkout that git does not ignore, the
 * emitted `.js` beside each `.ts`, and links back to what is built or
 * installed (node_modules, dist) and to `.git` (the client's small dist is
 * copied: a test packs it). So a path a
 * test builds from its own location (`../../data/…`, `../../bin/nerkh.js`)
 * lands on the same file as in the checkout, and `git` there sees the
 * checkout's index.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Built or installed, so not in git: linked, not copied. */
const LINKED = ['.git', 'node_modules', 'dist', 'clients/typescript/node_modules', 'test-artifacts'];
/** Built, and packed by a test (npm leaves a linked folder out of a tarball): copied, and small. */
const COPIED = ['clients/typescript/dist'];
const LISTING = '.files';

/** Where the compiled copy of `root` lives. */
export function compiledRoot(root: string): string {
  return join(root, 'node_modules', '.cache', 'nerkh-test');
}

/** `test/x.test.ts` → the compiled copy's `test/x.test.js`. */
export function compiledFile(root: string, file: string): string {
  return join(compiledRoot(root), file.replace(/\.ts$/, '.js'));
}

/** Bring the copy up to date with the checkout, then emit; resolves false (having printed tsc's errors) when the code does not compile. */
export function compile(root: string): Promise<boolean> {
  const copy = compiledRoot(root);
  mkdirSync(copy, { recursive: true });
  mirrorFiles(root, copy);
  for (const path of LINKED) {
    const target = join(root, path);
    if (path === 'test-artifacts') mkdirSync(target, { recursive: true });
    if (!existsSync(target)) continue;
    rmSync(join(copy, path), { recursive: true, force: true });
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    symlinkSync(target, join(copy, path));
  }
  for (const path of COPIED) {
    rmSync(join(copy, path), { recursive: true, force: true });
    if (existsSync(join(root, path))) cpSync(join(root, path), join(copy, path), { recursive: true });
  }
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  return succeeds(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', copy, '--noEmit', 'false', '--incremental', '--tsBuildInfoFile', join(copy, '.tsbuildinfo')], root);
}

/**
 * `command`, its output printed whole once it ends (several run side by side); resolves whether it exited 0.
 */
export function succeeds(command: string, args: string[], cwd: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => {
      console.error(`${command}: ${error.message}`);
      resolve(false);
    });
    child.on('close', (code) => {
      const text = Buffer.concat(output).toString('utf8').trim();
      if (text) console.log(text);
      resolve(code === 0);
    });
  });
}

/** Hard links to every file git keeps (tracked, or new and not ignored); files gone from the checkout since the last run go from the copy too, with what was emitted from them. */
function mirrorFiles(root: string, copy: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(root, file)));
  const listing = join(copy, LISTING);
  const before = existsSync(listing) ? readFileSync(listing, 'utf8').split('\n') : [];
  const now = new Set(files);
  for (const file of before) {
    if (file === '' || now.has(file)) continue;
    for (const path of [file, file.replace(/\.ts$/, '.js'), file.replace(/\.ts$/, '.js.map')]) rmSync(join(copy, path), { force: true });
  }
  for (const file of files) {
    const target = join(copy, file);
    mkdirSync(dirname(target), { recursive: true });
    try {
      unlinkSync(target);
    } catch {
      // Not there yet.
    }
    try {
      linkSync(join(root, file), target);
    } catch {
      // Another file system: a copy does as well.
      copyFileSync(join(root, file), target);
    }
  }
  writeFileSync(listing, files.join('\n'));
}
