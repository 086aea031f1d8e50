/**
 * The last step of `npm test`: check the services, then run the test files
 * (all of them, or those named: `npm test -- test/bus/wire.test.ts`) with
 * `node --test`.
 *
 * PostgreSQL and Redis are found through NERKH_TEST_DATABASE_URL and
 * NERKH_TEST_REDIS_URL, or the local services when those are unset. One that
 * does not answer stops the run before any test, with one line saying what to
 * start or export — unless NERKH_TEST_SKIP_SERVICES=1, when the tests needing
 * it are skipped and the run ends by saying how many.
 */
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkServices, problemLine, redact } from './support/preflight.js';
import { SERVICES, SKIP_SERVICES_VARIABLE, skippingServices } from './support/services.js';

/**
 * A hung test must not hold CI until its own limit: Node 20 applies this to a
 * whole file, Node 22 and later to each test, so it is sized for the longest
 * file (the fault and scale-out files take one to three minutes on a busy machine).
 */
const TEST_TIMEOUT_MS = 600_000;
const CONCURRENCY = 2;

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
// The fuzz test draws a new seed each run; printed here so a failing run can be replayed.
env.NERKH_FUZZ_SEED ||= String(randomInt(1, 2 ** 31));
console.log(`npm test: Node ${process.version}; ${using.join('; ')}; fuzz seed ${env.NERKH_FUZZ_SEED} (NERKH_FUZZ_SEED=${env.NERKH_FUZZ_SEED} replays it)`);

const named = process.argv.slice(2);
const files = named.length > 0 ? named : testFiles();
const skipReport = join(tmpdir(), `nerkh-test-skips-${process.pid}.json`);
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${CONCURRENCY}`,
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'test/support/skip-reporter.mjs')}`,
    `--test-reporter-destination=${skipReport}`,
    ...files,
  ],
  { cwd: root, env, stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));

child.on('exit', (code, signal) => {
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const skipped = readSkips();
  const lines = [`npm test: ${count(files.length, 'file')} in ${minutes} min on Node ${process.version}`];
  if (skipped && (skipped.serviceSuites.length > 0 || skipped.serviceTests > 0)) {
    lines.push(
      `npm test: ${SKIP_SERVICES_VARIABLE}=1 skipped ${count(skipped.serviceSuites.length, 'suite')} (every test in them) and ${count(skipped.serviceTests, 'test')} that need a missing service: ${skipped.serviceSuites.join('; ')}`,
    );
  } else if (skipping) {
    lines.push(`npm test: ${SKIP_SERVICES_VARIABLE}=1, but every service answered: nothing was skipped`);
  }
  console.log(lines.join('\n'));
  process.exit(code ?? (signal ? 1 : 0));
});

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function testFiles(): string[] {
  return (readdirSync(join(root, 'test'), { recursive: true }) as string[])
    .filter((path) => path.endsWith('.test.ts'))
    .map((path) => join('test', path))
    .sort();
}

function readSkips(): { serviceSuites: string[]; serviceTests: number; otherSkips: number } | null {
  try {
    return JSON.parse(readFileSync(skipReport, 'utf8'));
  } catch {
    return null;
  } finally {
    rmSync(skipReport, { force: true });
  }
}
