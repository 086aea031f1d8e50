import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

export interface Measurement {
  generator: 'wrk' | 'autocannon';
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

const HAS_WRK = spawnSync('wrk', ['--version']).error === undefined;

/** Load one URL for `seconds` with `connections` keep-alive connections; wrk when installed. */
export async function measure(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<Measurement> {
  return HAS_WRK ? withWrk(url, headers, seconds, connections) : withAutocannon(url, headers, seconds, connections);
}

/**
 * The same with wrk only, without blocking this process: for loads that must
 * run side by side (one URL measured while another floods the server).
 */
export async function measureBeside(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<Measurement> {
  if (!HAS_WRK) throw new Error('wrk is not installed: side-by-side loads need it');
  try {
    const { stdout } = await promisify(execFile)('wrk', [...wrkArgs(headers, seconds, connections), url], { encoding: 'utf8' });
    return parseWrk(stdout);
  } catch (error) {
    throw new Error(`wrk failed: ${(error as Error).message}`);
  }
}

function wrkArgs(headers: Record<string, string>, seconds: number, connections: number): string[] {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  return args;
}

function withWrk(url: string, headers: Record<string, string>, seconds: number, connections: number): Measurement {
  let output: string;
  try {
    output = execFileSync('wrk', [...wrkArgs(headers, seconds, connections), url], { encoding: 'utf8' });
  } catch (error) {
    throw new Error(`wrk failed: ${(error as Error).message}`);
  }
  return parseWrk(output);
}

/** What wrk printed (with --latency), as a measurement; socket errors count as non-2xx. */
export function parseWrk(output: string): Measurement {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN);
  const latency = (percent: string) => toMs(new RegExp(`^\\s+${percent}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(output));
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return { generator: 'wrk', rps, p50Ms: latency('50'), p99Ms: latency('99'), non2xx: non2xx + errors };
}

function toMs(match: RegExpExecArray | null): number {
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function withAutocannon(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<Measurement> {
  const result = await autocannon({ url, headers, duration: seconds, connections, pipelining: 1 });
  return { generator: 'autocannon', rps: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx + result.errors + result.timeouts };
}
