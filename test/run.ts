/**
 * The last step of `npm test`: check the services, then run the test files
 * (all of them, or those named: `npm test -- test/bus/wire.test.ts`), each in
 * a process of its own, several at a time, timing each file.
 *
 * PostgreSQL and Redis are found through NERKH_TEST_DATABASE_URL and
 * NERKH_TEST_REDIS_URL, or the local services when those are unset. One that
 * does not answer stops the run before any test, with one line saying what to
 * start or export — unless NERKH_TEST_SKIP_SERVICES=1, when the tests needing
 * it are skipped and the run ends by saying how many.
 *
 * Why not `node --test` with `--test-concurrency`: it cannot say how long each
 * file took, nor keep the heavy files (test/support/schedule.ts) from running
 * side by side. First every TypeScript file is compiled (and type-checked)
 * into a copy of the checkout (test/support/compile.ts says why); then each
 * test file runs there as JavaScript in a process of its own, with Node's
 * spec reporter; its output is printed whole when it ends, so files running
 * together never interleave.
 */
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { cpus, tmpdir } from 'node:os';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkServices, problemLine, redact } from './support/preflight.js';
import { SERVICES, SKIP_SERVICES_VARIABLE, skippingServices } from './support/services.js';
import { compile, compiledFile, compiledRoot, succeeds } from './support/compile.js';
import { orderFiles, testFiles, weightOf } from './support/schedule.js';

/** A file still running after this is stopped and fails the run: a hang, never a slow machine (the slowest file takes well under a minute). */
const FILE_DEADLINE_MS = 300_000;
/**
 * How much "weight" may run at once; a light file weighs 1, a heavy one more (test/support/schedule.ts).
 * Three per core: the files spend about a third of their time on the CPU (453 s of CPU in 1,430 s of
 * files' time on 2 cores), so at two per core the cores idled (6.1 min); at three, 4.9 min. Four per core
 * (eight) was no faster: both cores stayed busy throughout at six already (idle under 1 %, 2026-12-02).
 */
const CAPACITY = Number(process.env.NERKH_TEST_CAPACITY) || Math.max(4, cpus().length * 3);
const SLOWEST_SHOWN = 15;
/** GNU time, where installed, reports the CPU each file used (its servers and commands included): what chooses the capacity. */
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

interface FileResult {
  file: string;
  ms: number;
  code: number | null;
  output: string;
  counts: Record<string, number>;
  /** CPU seconds of the file's process and every process it waited for; null without GNU time. */
  cpu: number | null;
  skips: Skips | null;
  timedOut: boolean;
}

interface Skips {
  serviceSuites: string[];
  serviceTests: number;
  otherSkips: number;
}

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
const env: NodeJS.ProcessEnv = { ...process.env };
const skipping = skippingServices(env);

const checks = await checkServices(env);
const unusable = checks.filter((check) => check.problem !== null);
if (unusable.length > 0 && !skipping) {
  for (const check of unusable) console.error(`npm test: ${problemLine(check)}`);
  process.exit(1);
}
const using: string[] = [];
for (const check of checks) {
  const { variable, title } = SERVICES[check.service];
  if (check.problem === null) {
    env[variable] = check.url;
    using.push(`${title} ${redact(check.url)}${check.defaulted ? ' (local default)' : ''}`);
  } else {
    delete env[variable];
    using.push(`${title} SKIPPED (${check.problem})`);
  }
}
// Node 22.1 and later keep the code they compiled on disk and reuse it in every later process (test files, servers,
// commands: the same modules hundreds of times); Node 20 ignores the variable.
env.NODE_COMPILE_CACHE ||= join(compiledRoot(root), '.compile-cache');
// The fuzz test draws a new seed each run; printed here so a failing run can be replayed.
env.NERKH_FUZZ_SEED ||= String(randomInt(1, 2 ** 31));
console.log(
  `npm test: Node ${process.version}; ${using.join('; ')}; fuzz seed ${env.NERKH_FUZZ_SEED} (NERKH_FUZZ_SEED=${env.NERKH_FUZZ_SEED} replays it); capacity ${CAPACITY}`,
);

const named = process.argv.slice(2);
const files = orderFiles(named.length > 0 ? named : testFiles(root));
// The lint, the build (dist/, which the tests' servers run) and the compiled copy, side by side: each is one thread.
const preparing = Date.now();
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
const [linted, built, compiled] = await Promise.all([
  succeeds(npm[0]!, [...npm.slice(1), 'run', '--silent', 'lint'], root),
  succeeds(npm[0]!, [...npm.slice(1), 'run', '--silent', 'build'], root),
  compile(root),
]);
for (const [done, what] of [[linted, 'the lint found problems'], [built, 'the build failed'], [compiled, 'the code does not type-check']] as const) {
  if (!done) console.error(`npm test: ${what} (above)`);
}
if (!linted || !built || !compiled) process.exit(1);
console.log(`npm test: linted, built and compiled in ${seconds(Date.now() - preparing)}`);
const results: FileResult[] = [];
const running = new Set<ReturnType<typeof spawn>>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) stop(child, signal);
    process.exit(1);
  });
}

await runAll(files);
report();

/** Start files in order while their weight fits; a heavy file waits for room rather than letting light ones pass it forever. */
async function runAll(queue: string[]): Promise<void> {
  let load = 0;
  const pending = [...queue];
  await new Promise<void>((resolve) => {
    const next = (): void => {
      while (pending.length > 0) {
        const weight = Math.min(weightOf(pending[0]!), CAPACITY);
        if (load + weight > CAPACITY) break;
        const file = pending.shift()!;
        load += weight;
        void runFile(file).then((result) => {
          load -= weight;
          results.push(result);
          printResult(result);
          if (pending.length === 0 && results.length === queue.length) resolve();
          else next();
        });
      }
    };
    if (queue.length === 0) resolve();
    else next();
  });
}

function runFile(file: string): Promise<FileResult> {
  const skipReport = join(tmpdir(), `nerkh-test-skips-${process.pid}-${file.replace(/[^\w]+/g, '_')}.json`);
  const cpuReport = `${skipReport}.cpu`;
  const begun = Date.now();
  const command = [
    process.execPath,
    '--enable-source-maps',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'test/support/skip-reporter.mjs')}`,
    `--test-reporter-destination=${skipReport}`,
    compiledFile(root, file),
  ];
  const timed = GNU_TIME ? [GNU_TIME, '--quiet', '-f', '%U %S', '-o', cpuReport, ...command] : command;
  // A group of its own, so a hang is ended with everything it started.
  const child = spawn(timed[0]!, timed.slice(1), { cwd: compiledRoot(root), env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    stop(child, 'SIGKILL');
  }, FILE_DEADLINE_MS);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(deadline);
      running.delete(child);
      const output = Buffer.concat(chunks).toString('utf8');
      resolve({ file, ms: Date.now() - begun, code, output, counts: summaryCounts(output), cpu: readCpu(cpuReport), skips: readSkips(skipReport), timedOut });
    });
  });
}

function stop(child: ReturnType<typeof spawn>, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    child.kill(signal);
  }
}

function printResult(result: FileResult): void {
  const passed = result.code === 0 && !result.timedOut;
  const why = result.timedOut ? ` — stopped after ${FILE_DEADLINE_MS / 1000} s (a hang)` : passed ? '' : ` — exit code ${result.code}`;
  const cpu = result.cpu === null ? '' : `, cpu ${result.cpu.toFixed(1)} s`;
  console.log(`${passed ? '▶' : '✖'} ${result.file} (${seconds(result.ms)}${cpu})${why}`);
  console.log(indent(result.output.trimEnd()));
}

function report(): void {
  const total = Date.now() - started;
  const failed = results.filter((result) => result.code !== 0 || result.timedOut);
  const sum = (key: string): number => results.reduce((n, result) => n + (result.counts[key] ?? 0), 0);
  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST_SHOWN);
  const busy = results.reduce((n, result) => n + result.ms, 0);
  const cpu = results.reduce((n, result) => n + (result.cpu ?? 0), 0);
  const lines = [
    '',
    `npm test: the ${slowest.length} slowest files:`,
    ...slowest.map((result) => `  ${seconds(result.ms).padStart(7)}${result.cpu === null ? '' : ` (cpu ${result.cpu.toFixed(1)} s)`}  ${result.file}`),
    `npm test: ${count(sum('tests'), 'test')} (${sum('pass')} passed, ${sum('fail')} failed, ${sum('cancelled')} cancelled, ${sum('skipped')} skipped, ${sum('todo')} todo) in ${count(results.length, 'file')}; files' time added up ${seconds(busy)}${GNU_TIME ? `, their CPU ${seconds(cpu * 1000)}` : ''}`,
  ];
  if (failed.length > 0) {
    lines.push('', '✖ failing tests:');
    for (const result of failed) {
      const section = result.output.indexOf('✖ failing tests:');
      lines.push(`✖ ${result.file}${result.timedOut ? ` (stopped after ${FILE_DEADLINE_MS / 1000} s)` : ''}`);
      lines.push(indent(section >= 0 ? result.output.slice(section + '✖ failing tests:'.length).trim() : result.output.trimEnd().split('\n').slice(-40).join('\n')));
    }
  }
  const skips = results.map((result) => result.skips).filter((skip): skip is Skips => skip !== null);
  const serviceSuites = skips.flatMap((skip) => skip.serviceSuites);
  const serviceTests = skips.reduce((n, skip) => n + skip.serviceTests, 0);
  if (serviceSuites.length > 0 || serviceTests > 0) {
    lines.push(
      `npm test: ${SKIP_SERVICES_VARIABLE}=1 skipped ${count(serviceSuites.length, 'suite')} (every test in them) and ${count(serviceTests, 'test')} that need a missing service: ${serviceSuites.join('; ')}`,
    );
  } else if (skipping) {
    lines.push(`npm test: ${SKIP_SERVICES_VARIABLE}=1, but every service answered: nothing was skipped`);
  }
  lines.push(`npm test: ${count(results.length, 'file')}${failed.length > 0 ? `, ${failed.length} failed,` : ''} in ${(total / 60_000).toFixed(1)} min (${seconds(total)}) on Node ${process.version}`);
  console.log(lines.join('\n'));
  process.exit(failed.length > 0 ? 1 : 0);
}

/** The spec reporter's closing lines: "ℹ tests 12", "ℹ pass 11"… */
function summaryCounts(output: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const match of output.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[match[1]!] = Number(match[2]);
  return counts;
}

function readCpu(path: string): number | null {
  try {
    const [user, system] = readFileSync(path, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    return Number.isFinite(user) && Number.isFinite(system) ? user! + system! : null;
  } catch {
    return null;
  } finally {
    rmSync(path, { force: true });
  }
}

function readSkips(path: string): Skips | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Skips;
  } catch {
    return null;
  } finally {
    rmSync(path, { force: true });
  }
}

function indent(text: string): string {
  return text.replace(/^/gm, '  ');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
