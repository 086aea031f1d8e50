/**
 * The stream bench's anchors, read by the same client processes as nerkh and
 * at the same number of streams, one after the other on an otherwise idle
 * machine (nerkh stopped):
 *
 * - bare: plain node:http writing one Buffer to every socket in one loop
 *   (bench/stream-bare.mjs), the floor for one Node process;
 * - nchan: nginx with the nchan module, one worker, what an operator might
 *   put in front as the push server instead.
 *
 * Each gets one event a second, published with an HTTP POST; latency runs
 * from just before the POST to the client's receipt.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, openFileLimit, ROOT, startChild } from './processes.js';
import { openStreams, reports, resetClients, type Client } from './stream-clients.js';
import { lagDuring, latencies, type Change, type Lag, type Latencies } from './stream-latency.js';

const NCHAN_MODULE = '/usr/lib/nginx/modules/ngx_nchan_module.so';

export interface AnchorResult {
  name: 'bare' | 'nchan';
  open: number;
  refused: number;
  open_ms: number;
  latency: Latencies;
  /** The server's loop lag during its fan-outs (bare only: nginx has no Node loop). */
  lag: Lag | null;
}

export interface AnchorSetup {
  clients: Client[];
  children: ChildProcess[];
  work: string;
  streams: number;
  /** Changes published, one a second. */
  changes: number;
  /** An event's `data`, given its version: the size of nerkh's own `rates` event. */
  data(version: number): string;
}

export async function bareAnchor(setup: AnchorSetup): Promise<AnchorResult> {
  const port = await freePort();
  const probePort = await freePort();
  const child = await startChild(
    setup.children,
    process.execPath,
    ['--import', pathToFileURL(join(ROOT, 'bench', 'lag-probe.mjs')).href, join(ROOT, 'bench', 'stream-bare.mjs'), String(port)],
    { NERKH_BENCH_PROBE_PORT: String(probePort) },
    /bare fan-out listening/,
  );
  try {
    const base = `http://127.0.0.1:${port}`;
    const run = await deliver(setup, `${base}/stream`, {}, (version, data) => post(`${base}/publish?id=${version}`, data));
    return { name: 'bare', ...run, lag: await lagDuring(`http://127.0.0.1:${probePort}`, run.changesSent, run.reports) };
  } finally {
    child.kill('SIGKILL');
  }
}

/** null when nginx or its nchan module is not installed here (Debian: nginx-light, libnginx-mod-nchan). */
export async function nchanAnchor(setup: AnchorSetup): Promise<AnchorResult | null> {
  if (!existsSync(NCHAN_MODULE)) return null;
  const port = await freePort();
  const dir = join(setup.work, 'nchan');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'nginx.conf'), nchanConfig(dir, port, setup.streams));
  const nginx = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  try {
    await listening(port, nginx, join(dir, 'error.log'));
    const base = `http://127.0.0.1:${port}`;
    const run = await deliver(setup, `${base}/sub`, { accept: 'text/event-stream' }, (_version, data) => post(`${base}/pub`, data));
    return { name: 'nchan', ...run, lag: null };
  } finally {
    await stopNginx(nginx);
  }
}

/** One worker, every subscriber on one channel; an EventSource subscriber gets `event: rates`, nchan's own id and the data as published. */
function nchanConfig(dir: string, port: number, streams: number): string {
  const files = openFileLimit('self');
  return `load_module ${NCHAN_MODULE};
worker_processes 1;
worker_rlimit_nofile ${files};
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections ${Math.min(files, streams + 1_000)}; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location = /pub { nchan_publisher; nchan_channel_id rates; nchan_message_buffer_length 4; }
    location = /sub { nchan_subscriber eventsource; nchan_channel_id rates; nchan_eventsource_event rates; nchan_subscriber_first_message newest; }
  }
}
`;
}

/**
 * Opens the streams, publishes one change a second, and reads the receipts; the clients are reset after.
 * `around` runs as the publishing starts and once its last receipts are in (before the streams close).
 */
export async function deliver(
  setup: AnchorSetup,
  url: string,
  headers: Record<string, string>,
  publish: (version: number, data: string) => Promise<void>,
  around: { start?(): void; end?(): void } = {},
) {
  const opened = await openStreams(setup.clients, url, headers, setup.streams);
  console.log(`${opened.ok} streams open in ${opened.ms} ms on ${url} (${opened.failed} refused${opened.firstError ? `, first: ${opened.firstError}` : ''})`);
  await sleep(2000);
  around.start?.();
  const changesSent: Change[] = [];
  for (let version = 1; version <= setup.changes; version++) {
    const started = Date.now();
    const data = setup.data(version);
    await publish(version, data);
    changesSent.push({ written_at: started, version, built_at: started });
    await sleep(Math.max(0, 1000 - (Date.now() - started)));
  }
  await sleep(1500);
  around.end?.();
  const received = await reports(setup.clients);
  await resetClients(setup.clients);
  return { open: opened.ok, refused: opened.failed, open_ms: opened.ms, latency: latencies(changesSent, received, opened.ok), changesSent, reports: received };
}

export async function post(url: string, body: string): Promise<void> {
  const response = await fetch(url, { method: 'POST', body });
  await response.arrayBuffer();
  if (response.status >= 300) throw new Error(`POST ${url}: ${response.status}`);
}

function listening(port: number, nginx: ChildProcess, errorLog: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (nginx.exitCode !== null || Date.now() > deadline) {
        return reject(new Error(`nginx did not start: ${existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : 'no error log'}`));
      }
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve()));
      socket.once('error', () => setTimeout(attempt, 50));
    };
    attempt();
  });
}

/** A fast shutdown of master and worker (SIGTERM to the master); a master killed outright would leave its worker running. */
async function stopNginx(nginx: ChildProcess): Promise<void> {
  if (nginx.exitCode !== null) return;
  const exited = new Promise((resolve) => nginx.once('exit', resolve));
  nginx.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
