import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { assertBuilt, BIN, cliOk, cliOkEach, freePort, pollUntil, ROOT, runCli, sleep, type RunResult as CliResult } from './helpers.js';
import { HANG_MS } from '../support/deadline.js';

// Shared with the failover suite; what follows is specific to the access tests.
export { assertBuilt, cliOk, cliOkEach, freePort, pollUntil, ROOT, runCli, sleep, type CliResult };

/** reference key → source_key, read from the bundled catalogue files. */
export function catalogueSourceKeys(): Map<string, string> {
  const dir = join(ROOT, 'data', 'catalogue');
  const map = new Map<string, string>();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.json')) continue;
    const parsed: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    if (!Array.isArray(parsed)) continue;
    for (const entry of parsed as unknown[]) {
      if (entry && typeof entry === 'object' && 'key' in entry && 'source_key' in entry) {
        const { key, source_key: sourceKey } = entry as { key: unknown; source_key: unknown };
        if (typeof key === 'string' && typeof sourceKey === 'string') map.set(key, sourceKey);
      }
    }
  }
  return map;
}

/** Run a CLI command that must succeed and print JSON (`--json` is appended). */
export async function cliJson<T>(env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  const result = await runCli(env, [...args, '--json']);
  if (result.code !== 0) throw new Error(`nerkh ${args.join(' ')} exited ${result.code ?? result.signal}: ${result.stderr.trim() || result.stdout.trim()}`);
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`nerkh ${args.join(' ')} printed no JSON: ${result.stdout}`);
  }
}

export interface ServerProcess {
  base: string;
  child: ChildProcess;
  /** Everything the process wrote so far, stdout and stderr. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then wait for the exit (bounded); resolves with the exit code and how long it took. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  /** SIGKILL if still running; safe to call any time. */
  kill(): void;
}

/**
 * Start `nerkh serve`; resolves once it prints its listening line. Port 0 lets the system choose
 * (read back from that line), so files side by side never race for one; a test that restarts a
 * server where its clients point gives the port it had.
 */
export function startServer(env: NodeJS.ProcessEnv, port: number, timeoutMs = HANG_MS): Promise<ServerProcess> {
  // Shedding only past 10 s of lag, as helpers.ts's cleanEnv says why, unless the test sets it.
  const child = spawn(process.execPath, [BIN, 'serve'], { cwd: ROOT, env: { NERKH_SHED_AFTER_LAG_MS: '10000', NERKH_MARKET_CALENDAR: 'off', ...env, NERKH_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      resolveExit(exit);
    });
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const kill = () => {
    if (exit === null && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const server: ServerProcess = {
    base: `http://127.0.0.1:${port}`,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    kill,
    async stop(stopTimeoutMs = HANG_MS) {
      const started = Date.now();
      if (exit === null) child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), stopTimeoutMs)));
      const result = await Promise.race([exited, timeout]);
      clearTimeout(timer);
      if (result === null) {
        kill();
        throw new Error(`nerkh serve did not exit within ${stopTimeoutMs} ms of SIGTERM\nstderr: ${stderr}`);
      }
      return { ...result, ms: Date.now() - started };
    },
  };
  return new Promise((resolveStart, reject) => {
    const listening = new RegExp(`nerkh listening on http://127\\.0\\.0\\.1:(${port === 0 ? '\\d+' : port})\\b`);
    const fail = (why: string) => {
      clearInterval(poll);
      clearTimeout(timer);
      kill();
      reject(new Error(`nerkh serve ${why}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    };
    const timer = setTimeout(() => fail(`did not report listening within ${timeoutMs} ms`), timeoutMs);
    const poll = setInterval(() => {
      const heard = listening.exec(stdout);
      if (heard) {
        server.base = `http://127.0.0.1:${heard[1]}`;
        clearInterval(poll);
        clearTimeout(timer);
        resolveStart(server);
      } else if (exit !== null) {
        fail(`exited early (${exit.code ?? exit.signal})`);
      }
    }, 20);
    child.on('error', (error) => fail(`could not start: ${error.message}`));
  });
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or null. */
  body: Record<string, unknown> | null;
  sentAt: number;
  receivedAt: number;
}

/** GET from the server with a key (when given), bounded by a timeout. */
export async function get(base: string, path: string, key?: string, timeoutMs = 5000): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers['x-api-key'] = key;
  const sentAt = Date.now();
  const response = await fetch(base + path, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  const receivedAt = Date.now();
  let body: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = null;
  }
  return { status: response.status, headers: response.headers, text, body, sentAt, receivedAt };
}

/** Every regular file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) out.push(...filesUnder(path));
    else if (stat.isFile()) out.push(path);
  }
  return out;
}

/** Files under `dir` whose bytes (read as latin1) contain any of `needles`. */
export function filesContaining(dir: string, needles: string[]): { file: string; needle: string }[] {
  const hits: { file: string; needle: string }[] = [];
  for (const file of filesUnder(dir)) {
    let text: string;
    try {
      text = readFileSync(file).toString('latin1');
    } catch {
      continue; // removed meanwhile (e.g. a -shm file)
    }
    for (const needle of needles) if (text.includes(needle)) hits.push({ file, needle });
  }
  return hits;
}

/** Seconds until the next wall-clock multiple of `intervalSeconds` (as the server computes Cache-Control). */
export function secondsToNextBoundary(intervalSeconds: number, now: number): number {
  const ms = intervalSeconds * 1000;
  return Math.ceil((ms - (now % ms)) / 1000);
}
