/**
 * deploy/Dockerfile, built without a Docker engine: its own COPY list and RUN
 * commands, read from the file, replayed in a scratch folder (test/deploy/
 * replay.ts says how), then the final stage's CMD started as the image would
 * start it, its HEALTHCHECK run against it, and its STOPSIGNAL sent.
 *
 * Takes a minute or two: `npm ci` really runs (from the local npm cache, the
 * registry only for what the cache lacks). The one download outside the npm
 * registry, better-sqlite3's prebuilt binary (from GitHub), is served from the
 * binary this checkout already built, under the name the download would have.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { freePort, ROOT, sleep } from '../e2e/helpers.js';
import { HANG_MS } from '../support/deadline.js';
import { tempDir } from '../support/env.js';
import { parseDockerfile, type Stage } from './dockerfile.js';
import { replay, type ReplayedStage } from './replay.js';

const run = promisify(execFile);
const DOCKERFILE = join(ROOT, 'deploy', 'Dockerfile');

describe('deploy/Dockerfile', () => {
  const scratch = tempDir('nerkh-docker-');
  after(() => scratch.cleanup());

  it('both stages start from the same image (the native module built in one runs in the other)', () => {
    const stages = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
    assert.ok(stages.length >= 2, `expected a build stage and a runtime stage, saw ${stages.length}`);
    assert.deepEqual(new Set(stages.map((stage) => stage.image)).size, 1, `images differ: ${stages.map((stage) => stage.image).join(', ')}`);
  });

  it('builds, and the image it makes starts, answers its health check and stops on its stop signal', { timeout: 900_000 }, async () => {
    const stages = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
    const built = await replay(stages, {
      context: ROOT,
      scratch: scratch.path,
      baseEnv: await buildEnv(join(scratch.path, 'prebuilds')),
      runTimeoutMs: 400_000,
      log: (line) => console.log(line),
    });
    const image = built.at(-1)!;
    await startAsTheImageWould(image);
  });
});

/** The host's environment for RUN: no NERKH_* or test-runner variables, no npm settings inherited from a parent `npm test`. */
async function buildEnv(prebuilds: string): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(NERKH_|NODE_TEST|npm_)/i.test(name) && name !== 'NODE_OPTIONS') env[name] = value;
  }
  // Reuse the npm cache; ask the registry only for what it lacks.
  env.npm_config_prefer_offline = 'true';
  env.npm_config_audit = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_update_notifier = 'false';
  const prebuilt = await localPrebuild(prebuilds);
  // prebuild-install reads npm_config_<package>_local_prebuilds (npm warns it does not know the setting; it is not npm's).
  if (prebuilt) env.npm_config_better_sqlite3_local_prebuilds = prebuilds;
  return env;
}

/**
 * better-sqlite3's install downloads `better-sqlite3-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`
 * from GitHub, or compiles for minutes without it. Offer the one this checkout built instead, when
 * it is the version the lock file pins (the same Node runs both, so the ABI is the same).
 */
async function localPrebuild(folder: string): Promise<boolean> {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const pinned = lock.packages['node_modules/better-sqlite3']?.version;
  const module = join(ROOT, 'node_modules', 'better-sqlite3');
  const installed = (JSON.parse(readFileSync(join(module, 'package.json'), 'utf8')) as { version: string }).version;
  if (!pinned || pinned !== installed || !existsSync(join(module, 'build', 'Release', 'better_sqlite3.node'))) return false;
  mkdirSync(folder, { recursive: true });
  const name = `better-sqlite3-v${pinned}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(folder, name), '-C', module, 'build/Release/better_sqlite3.node']);
  return true;
}

function instruction<K extends Stage['instructions'][number]['kind']>(stage: ReplayedStage, kind: K): Extract<Stage['instructions'][number], { kind: K }> {
  const found = stage.stage.instructions.find((step) => step.kind === kind);
  assert.ok(found, `the final stage has no ${kind}`);
  return found as Extract<Stage['instructions'][number], { kind: K }>;
}

/** `node` in the image is this Node here. */
function local(argv: string[]): [string, string[]] {
  assert.equal(argv[0], 'node', `expected a node command, saw ${argv.join(' ')}`);
  return [process.execPath, argv.slice(1)];
}

/**
 * The final stage's CMD in its WORKDIR with its ENV (host and port made local: the test talks to
 * 127.0.0.1 only), then its HEALTHCHECK command, then its STOPSIGNAL: the drain must end the process
 * cleanly within the 10 s the Dockerfile promises (15 s allowed, as deploy/compose.yaml does).
 */
async function startAsTheImageWould(image: ReplayedStage): Promise<void> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: image.root, ...image.env, NERKH_HOST: '127.0.0.1', NERKH_PORT: String(port) };
  const [command, args] = local(instruction(image, 'CMD').argv);
  const child = spawn(command, args, { cwd: image.workdir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  try {
    const deadline = Date.now() + HANG_MS;
    while (child.exitCode === null && !/nerkh listening on http:\/\//.test(output) && Date.now() < deadline) await sleep(50);
    assert.match(output, /nerkh listening on http:\/\//, `the image's CMD did not start the server:\n${output.slice(-4000)}`);

    const [checkCommand, checkArgs] = local(instruction(image, 'HEALTHCHECK').argv);
    // The image's own HEALTHCHECK timeout judges speed; here only that the check passes (a node start on a busy machine takes seconds).
    await run(checkCommand, checkArgs, { cwd: image.workdir, env, timeout: HANG_MS }).catch((error: Error) => assert.fail(`the HEALTHCHECK failed: ${error.message}\n${output.slice(-2000)}`));

    const signal = instruction(image, 'STOPSIGNAL').signal as NodeJS.Signals;
    const stopped = Date.now();
    child.kill(signal);
    const exit = await Promise.race([exited, sleep(15_000).then(() => null)]);
    assert.ok(exit, `still running 15 s after ${signal}`);
    assert.equal(exit.code, 0, `${signal} ended the server with ${JSON.stringify(exit)} after ${Date.now() - stopped} ms:\n${output.slice(-2000)}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
