/**
 * Running a document's shell lines as a reader would: through bash, with the
 * variables the reader has set, and curl's status code kept beside the body.
 */
import { spawn } from 'node:child_process';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a script with bash (`set -euo pipefail`), bounded by `timeoutMs`. */
export function bash(script: string, env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}\n`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Outcome {
  status: number;
  body: string;
  stderr: string;
}

/**
 * Run one curl line of a document with `env` (KEY in it). `curl` is wrapped
 * (the line itself is untouched) so the status code follows the body.
 */
export async function runCurl(line: string, env: NodeJS.ProcessEnv, cwd: string): Promise<Outcome> {
  const run = await bash(`curl() { command curl -sS --max-time 10 -w '\\n%{http_code}' "$@"; }\n${line}`, env, cwd, 20_000);
  const cut = run.stdout.lastIndexOf('\n');
  return { status: Number(run.stdout.slice(cut + 1)) || 0, body: run.stdout.slice(0, Math.max(cut, 0)), stderr: `exit ${run.code} ${run.stderr}` };
}

export const show = (outcome: Outcome) => `HTTP ${outcome.status} ${outcome.body.slice(0, 600)} ${outcome.stderr.slice(0, 300)}`;
