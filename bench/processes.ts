/** The processes a bench starts and reads: the real server, helpers, their memory (Linux /proc). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'bin', 'nerkh.js');
/** The node flags of `npm start`, so the bench runs the server exactly as production does. */
export const SERVE_FLAGS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--'));

/** `nerkh serve` with `env`, resolved once /readyz answers 200; readyMs counts from the spawn. */
export async function startServer(env: NodeJS.ProcessEnv, children: ChildProcess[], bin = BIN, nodeFlags: string[] = []): Promise<{ child: ChildProcess; readyMs: number }> {
  const started = Date.now();
  const child = await startChild(children, process.execPath, [...SERVE_FLAGS, ...nodeFlags, bin, 'serve'], env, /nerkh listening on/);
  const url = `http://127.0.0.1:${env.NERKH_PORT}/readyz`;
  for (;;) {
    const ok = await fetch(url).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() - started > 15_000) throw new Error('server not ready within 15 s');
    await new Promise((r) => setTimeout(r, 10));
  }
  return { child, readyMs: Date.now() - started };
}

/** Spawn a child and resolve once its output matches `ready`; it is added to `children` for cleanup. */
export function startChild(children: ChildProcess[], command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, cwd?: string, timeoutMs = 20_000): Promise<ChildProcess> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], cwd });
    children.push(child);
    let output = '';
    let started = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!started && ready.test(output)) {
        started = true;
        resolvePromise(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => {
      if (!started) reject(new Error(`${args[0]} exited with ${code}: ${output}`));
      // A child that ends on its own mid-run says why (the bench kills its children with signals).
      else if (code !== null) console.error(`${args[0]} exited with ${code} during the run; its last output:\n${output.slice(-4000)}`);
    });
    setTimeout(() => reject(new Error(`${args[0]} did not start: ${output}`)), timeoutMs).unref();
  });
}

/** Start a new high-water mark for the process's resident memory (Linux: clear_refs 5); best effort. */
export function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Not permitted here: the peak then spans every round so far.
  }
}

/** Resident memory now and its high-water mark, in MB (Linux /proc). */
export function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** CPU time a process has used so far, user and system, in ms (Linux /proc; clock ticks of 10 ms). */
export function cpuTime(pid: number): { user: number; system: number } {
  // The fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** A process's soft limit on open files (Linux /proc). */
export function openFileLimit(pid: number | 'self'): number {
  const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
  return Number(/Max open files\s+(\d+|unlimited)/.exec(limits)?.[1]?.replace('unlimited', 'Infinity') ?? NaN);
}

export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePromise(port));
    });
    server.on('error', reject);
  });
}

export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** Three file sources at the demo levels, each 0.1 % above the one before (apart, as real quotes are), stamped now. */
export function writeSources(work: string): void {
  const levels = JSON.parse(readFileSync(join(ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
  mkdirSync(join(work, 'sources'), { recursive: true });
  ['alpha', 'beta', 'gamma'].forEach((name, i) => {
    const items = Object.fromEntries(Object.entries(levels).map(([key, level]) => [key, Number((level * (1 + i * 0.001)).toPrecision(8))]));
    writeFileSync(join(work, 'sources', `${name}.json`), JSON.stringify({ updated_at: new Date().toISOString(), items }));
  });
}
