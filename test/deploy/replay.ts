/**
 * Replays a parsed Dockerfile in a scratch folder, without a Docker engine:
 * each stage gets a folder standing for its filesystem root, COPY copies from
 * the build context (the files a fresh clone has: `git ls-files`) or from an
 * earlier stage (minus what .dockerignore leaves out), and RUN runs the command with /bin/sh (as Docker's shell
 * form does) in the stage's WORKDIR, its ENV set.
 *
 * What cannot run here is checked instead of skipped silently:
 * - a RUN that installs system packages must be apt-get and nothing else (the
 *   base image's packages are the host's business here);
 * - `chown USER:GROUP path` must name the stage's USER and a path that exists
 *   (the host has no such user);
 * - absolute paths in RUN and ENV are taken inside the stage's root, so the
 *   replay never writes outside its scratch folder.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, posix } from 'node:path';
import type { Instruction, Stage } from './dockerfile.js';

export interface ReplayedStage {
  stage: Stage;
  /** The folder standing for the stage's `/`. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user: string | null;
}

export interface ReplayOptions {
  /** The build context (the repository root). */
  context: string;
  /** The scratch folder: one sub-folder per stage. */
  scratch: string;
  /** Environment for the RUN commands besides the stage's ENV (PATH, the npm cache). */
  baseEnv: NodeJS.ProcessEnv;
  /** Longest a single RUN may take. */
  runTimeoutMs: number;
  /** Told each step as it starts, for the test's log. */
  log?: (line: string) => void;
}

/** Run every stage in order; returns them replayed, the last one being the image that runs. */
export async function replay(stages: Stage[], options: ReplayOptions): Promise<ReplayedStage[]> {
  const tracked = trackedFiles(options.context);
  const done: ReplayedStage[] = [];
  for (const [index, stage] of stages.entries()) {
    const root = join(options.scratch, `stage-${index}`);
    mkdirSync(root, { recursive: true });
    const replayed: ReplayedStage = { stage, root, workdir: root, env: {}, user: null };
    const user = stage.instructions.find((step): step is Extract<Instruction, { kind: 'USER' }> => step.kind === 'USER')?.user ?? null;
    for (const step of stage.instructions) {
      const started = Date.now();
      switch (step.kind) {
        case 'WORKDIR':
          replayed.workdir = inside(root, replayed.workdir, step.path);
          mkdirSync(replayed.workdir, { recursive: true });
          break;
        case 'ENV':
          for (const [name, value] of Object.entries(step.vars)) replayed.env[name] = value.startsWith('/') ? inside(root, root, value) : value;
          break;
        case 'COPY':
          copy(step, replayed, done, stages, options.context, tracked);
          break;
        case 'RUN':
          await run(step.command, replayed, user, options);
          break;
        case 'USER':
          replayed.user = step.user;
          break;
        default:
          break;
      }
      options.log?.(`[stage ${index}] ${describe(step)} (${Date.now() - started} ms)`);
    }
    done.push(replayed);
  }
  return done;
}

function describe(step: Instruction): string {
  switch (step.kind) {
    case 'RUN':
      return `RUN ${step.command}`;
    case 'WORKDIR':
      return `WORKDIR ${step.path}`;
    case 'COPY':
      return `COPY ${step.from ? `--from=${step.from} ` : ''}${step.sources.join(' ')} ${step.dest}`;
    default:
      return step.kind;
  }
}

/** `path` (absolute in the stage, or relative to `cwd`) as a path under the stage's `root`. */
function inside(root: string, cwd: string, path: string): string {
  const resolved = isAbsolute(path) ? join(root, normalize(path)) : join(cwd, path);
  if (!resolved.startsWith(root)) throw new Error(`${path} leaves the stage's root`);
  return resolved;
}

/** The build context as a fresh clone has it: tracked files only (never a local dist/ or node_modules/), less what .dockerignore names. */
function trackedFiles(context: string): Set<string> {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: context, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ignored = dockerignore(context);
  return new Set(out.split('\0').filter((file) => file && !ignored.some((pattern) => pattern(file))));
}

/** .dockerignore's patterns as tests on a context path; the plain forms only (a name, a dir/name, either under any folder with a leading double star), anything else is an error. */
function dockerignore(context: string): ((file: string) => boolean)[] {
  const path = join(context, '.dockerignore');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const anywhere = line.startsWith('**/');
      const name = posix.normalize(anywhere ? line.slice(3) : line).replace(/^\/|\/$/g, '');
      if (/[*?![\]]/.test(name)) throw new Error(`.dockerignore: the replay reads only plain paths, not ${line}`);
      if (anywhere) return (file: string) => file === name || file.startsWith(`${name}/`) || file.includes(`/${name}/`) || file.endsWith(`/${name}`);
      return (file: string) => file === name || file.startsWith(`${name}/`);
    });
}

function copy(step: Extract<Instruction, { kind: 'COPY' }>, stage: ReplayedStage, done: ReplayedStage[], stages: Stage[], context: string, tracked: Set<string>): void {
  const destIsDir = step.dest.endsWith('/') || step.sources.length > 1;
  const dest = inside(stage.root, stage.workdir, step.dest);
  for (const source of step.sources) {
    if (step.from !== null) {
      const from = done.find((earlier) => earlier.stage.name === step.from || String(stages.indexOf(earlier.stage)) === step.from);
      if (!from) throw new Error(`COPY --from=${step.from}: no earlier stage of that name`);
      const path = inside(from.root, from.root, source);
      if (!existsSync(path)) throw new Error(`COPY --from=${step.from} ${source}: the stage has no ${source}`);
      const target = statSync(path).isDirectory() || !destIsDir ? dest : join(dest, posix.basename(source));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target, { recursive: true, verbatimSymlinks: true });
      continue;
    }
    const prefix = posix.normalize(source).replace(/^\.\/?/, '').replace(/\/$/, '');
    if (tracked.has(prefix)) {
      const target = destIsDir ? join(dest, posix.basename(prefix)) : dest;
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(context, prefix), target);
      continue;
    }
    const under = [...tracked].filter((file) => prefix === '' || file.startsWith(`${prefix}/`));
    if (under.length === 0) throw new Error(`COPY ${source}: not in the build context (a fresh clone has no such file or folder)`);
    for (const file of under) {
      const target = join(dest, prefix === '' ? file : file.slice(prefix.length + 1));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(context, file), target);
    }
  }
}

const APT_PART = /^(apt-get\s.+|rm -rf \/var\/lib\/apt\/lists\/\*)$/;
const CHOWN_PART = /^chown\s+(?:-R\s+)?([\w-]+):([\w-]+)\s+(\S+)$/;

async function run(command: string, stage: ReplayedStage, user: string | null, options: ReplayOptions): Promise<void> {
  const parts = command.split('&&').map((part) => part.trim());
  if (/\bapt-get\b/.test(command)) {
    const other = parts.filter((part) => !APT_PART.test(part));
    if (other.length > 0) throw new Error(`RUN mixes apt-get with other work the replay would skip: ${other.join(' && ')}`);
    options.log?.('  (system packages: left to the base image)');
    return;
  }
  const local = parts.map((part) => {
    const chown = CHOWN_PART.exec(part);
    if (!chown) return part.replace(/(^|\s)\/(?=\w)/g, `$1${stage.root}/`);
    if (chown[1] !== user) throw new Error(`RUN ${part}: the stage runs as ${user ?? 'root'}, not ${chown[1]}`);
    return `test -e ${inside(stage.root, stage.workdir, chown[3]!)}`;
  });
  const env = { ...options.baseEnv, ...stage.env };
  await new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', local.join(' && ')], { cwd: stage.workdir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.runTimeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`RUN ${command} failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}`));
    });
  });
}
