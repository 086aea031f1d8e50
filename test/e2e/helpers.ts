/**
 * Helpers for end-to-end tests that run Nerkh as real processes: the server
 * (`node bin/nerkh.js serve`) and the admin CLI, talking to it over HTTP on
 * 127.0.0.1 only. Every child started here is tracked and killed when the test
 * process exits, whatever happened, so no server outlives its test run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generous, HANG_MS } from '../support/deadline.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'nerkh.js');

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

const DAY_MS = 86_400_000;
/** Milliseconds since midnight in Tehran (+03:30 all year), the zone the servers' windows follow. */
export const intoTehranDay = (ms: number) => (ms + 3.5 * 3_600_000) % DAY_MS;

/**
 * A clock for a server about to be spawned (its `env`, NERKH_CLOCK_SHIFT_MS)
 * that starts at the top of a minute, at least `clearOfMidnightMs` before
 * Tehran's midnight, and `now()`, the time it reads: a test's requests after
 * the start fall in one minute window and one day, without waiting for the
 * wall clock to get there.
 */
export function minuteStartClock(clearOfMidnightMs = 120_000): { env: Record<string, string>; now(): number } {
  const real = Date.now();
  let start = real - (real % 60_000) + 60_000;
  const untilMidnight = DAY_MS - intoTehranDay(start);
  if (untilMidnight < clearOfMidnightMs) start += untilMidnight;
  const shift = start - real;
  return { env: { NERKH_CLOCK_SHIFT_MS: String(shift) }, now: () => Date.now() + shift };
}

/** `promise`'s value, or null after `ms`; the timer goes with the race, so a finished run never waits it out. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Fail early with a useful message when `dist/` (which bin/nerkh.js imports) is missing. */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'bundle', 'main.js'))) throw new Error('dist/ is missing: run `npm run build` before the e2e tests');
}

/** A TCP port free right now on 127.0.0.1: listen on port 0, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolvePort(port) : reject(new Error('no port assigned'))));
    });
  });
}

/**
 * The process environment without any NERKH_* variable, plus `extra`. A server
 * sheds requests only past 10 s of event-loop lag, and never for a busy loop alone,
 * unless `extra` says otherwise: a test machine running several files is busy
 * enough to delay any loop by the default quarter second, and to keep it 90 %
 * busy, without the server being at fault (a status page polled next to a steady
 * prober was shed as the dominant caller). The shedding has tests of its own, and
 * usage-flood keeps the defaults.
 */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('NERKH_')) env[name] = value;
  // Markets keep no calendar unless a test gives one (NERKH_MARKET_CALENDAR=on): a test's staleness never depends on the day it runs.
  return { ...env, NERKH_SHED_AFTER_LAG_MS: '10000', NERKH_SHED_AT_BUSY_PERCENT: '100', NERKH_MARKET_CALENDAR: 'off', ...extra };
}

export interface CatalogueEntry {
  key: string;
  source_key: string;
  category: string;
}

/** The bundled catalogue as shipped in data/catalogue (reference key → entry), and the popular list. */
export function readCatalogue(): { references: Map<string, CatalogueEntry>; popular: string[] } {
  const dir = join(ROOT, 'data', 'catalogue');
  const references = new Map<string, CatalogueEntry>();
  let popular: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    if (file === 'popular.json') {
      popular = (parsed as unknown[]).filter((k): k is string => typeof k === 'string');
      continue;
    }
    if (!Array.isArray(parsed)) continue;
    for (const item of parsed as Partial<CatalogueEntry>[]) {
      if (typeof item.key === 'string' && typeof item.source_key === 'string') references.set(item.key, { key: item.key, source_key: item.source_key, category: String(item.category) });
    }
  }
  return { references, popular };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run `nerkh <args>` as its own process (in `cwd`, the repository by default), bounded by `timeoutMs` or HANG_MS, the longer (then killed). */
export function runCli(env: NodeJS.ProcessEnv, args: string[], timeoutMs = HANG_MS, cwd = ROOT): Promise<RunResult> {
  timeoutMs = generous(timeoutMs);
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`nerkh ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      children.delete(child);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolveRun({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Commands two at a time, results in order: a burst of a dozen starting at once only
 * queues them all behind each other on a small machine, each slower than one alone.
 */
export async function runCliEach(env: NodeJS.ProcessEnv, commands: string[][], concurrency = 2): Promise<RunResult[]> {
  const results: RunResult[] = new Array<RunResult>(commands.length);
  let next = 0;
  const worker = async () => {
    while (next < commands.length) {
      const index = next++;
      results[index] = await runCli(env, commands[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, commands.length) }, worker));
  return results;
}

/** Each command in turn through `cliOk`, two at a time. */
export async function cliOkEach(env: NodeJS.ProcessEnv, commands: string[][]): Promise<void> {
  for (const result of await runCliEach(env, commands)) {
    if (result.code !== 0) throw new Error(`nerkh exited ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
}

/** Run the CLI and insist on exit code 0; the error shows what it printed. */
export async function cliOk(env: NodeJS.ProcessEnv, args: string[]): Promise<RunResult> {
  const result = await runCli(env, args);
  if (result.code !== 0) throw new Error(`nerkh ${args.join(' ')} exited ${result.code ?? result.signal}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `nerkh serve`. */
export class ServerProcess {
  stdout = '';
  stderr = '';
  exit: Exit | null = null;
  readonly exited: Promise<Exit>;
  /** When the process was spawned (epoch ms). */
  readonly startedAt = Date.now();

  constructor(
    readonly child: ChildProcess,
    /** The port it listens on: known once it says so. */
    public port: number,
  ) {
    children.add(child);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolveExit) => {
      child.on('close', (code, signal) => {
        this.exit = { code, signal };
        children.delete(child);
        resolveExit(this.exit);
      });
    });
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** What the process printed, for failure messages. */
  output(): string {
    return `--- stdout ---\n${this.stdout.slice(-4000)}\n--- stderr ---\n${this.stderr.slice(-4000)}`;
  }

  /** Send `signal` and wait for the exit, at most `timeoutMs`; returns the exit and how long it took. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = HANG_MS): Promise<{ exit: Exit | null; ms: number }> {
    const started = Date.now();
    if (this.exit) return { exit: this.exit, ms: 0 };
    this.child.kill(signal);
    const exit = await within(this.exited, timeoutMs);
    return { exit, ms: Date.now() - started };
  }

  /** Last-resort clean-up for `after` hooks: SIGKILL if still running, and wait for it. */
  async kill(): Promise<void> {
    if (this.exit) return;
    this.child.kill('SIGKILL');
    await within(this.exited, 5000);
  }
}

/**
 * Start `node [nodeArgs] bin/nerkh.js serve [args]` with `env` and wait for its
 * "nerkh listening on …" line. Only the given NERKH_* variables reach the child
 * (none inherited). It listens on a port the system gives it (NERKH_PORT=0, read
 * back from that line), so files running side by side never race for one. A
 * start that fails or hangs throws with everything the child printed.
 */
export async function startServer(env: Record<string, string>, options: { cwd?: string; timeoutMs?: number; args?: string[]; nodeArgs?: string[] } = {}): Promise<ServerProcess> {
  const timeoutMs = generous(options.timeoutMs ?? HANG_MS);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, 'serve', ...(options.args ?? [])], { cwd: options.cwd ?? ROOT, env: cleanEnv({ NERKH_PORT: '0', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  const server = new ServerProcess(child, 0);
  const listening = /nerkh listening on http:\/\/[^\s:]+:(\d+)/;
  const deadline = Date.now() + timeoutMs;
  while (server.running && !listening.test(server.stdout) && Date.now() < deadline) await sleep(25);
  const port = listening.exec(server.stdout)?.[1];
  if (port) {
    server.port = Number(port);
    return server;
  }
  await server.kill();
  throw new Error(`nerkh serve did not start within ${timeoutMs} ms (exit: ${JSON.stringify(server.exit)})\n${server.output()}`);
}

export interface Response {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

/** One GET against the server, bounded by `timeoutMs`, body read in full. */
export async function get(base: string, path: string, key?: string, timeoutMs = HANG_MS): Promise<Response> {
  const response = await fetch(`${base}${path}`, { headers: key ? { 'x-api-key': key } : {}, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/**
 * Poll `probe` every `intervalMs` until `done` holds, at most `timeoutMs` or HANG_MS, the longer.
 * Returns the last value and the milliseconds since the call; the error on
 * timeout shows the last value seen (or the last error thrown).
 */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, intervalMs = 50, show: (value: T) => string = (v) => JSON.stringify(v)): Promise<{ value: T; ms: number }> {
  timeoutMs = generous(timeoutMs);
  const started = Date.now();
  let last: { value: T } | null = null;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (done(value)) return { value, ms: Date.now() - started };
      last = { value };
    } catch (error) {
      lastError = error;
    }
    if (Date.now() - started > timeoutMs) {
      const seen = last ? show(last.value).slice(0, 1500) : `no answer (${(lastError as Error | null)?.message ?? 'none'})`;
      throw new Error(`condition not met within ${timeoutMs} ms; last seen: ${seen}`);
    }
    await sleep(intervalMs);
  }
}
