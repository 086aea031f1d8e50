/**
 * Debian's HAProxy running the shipped config (deploy/haproxy.cfg) in front of
 * one local node: only its listener and servers are moved to this test's
 * ports, so what it does with a request (or a node that went away) is what a
 * deployment's proxy does. A missing /usr/sbin/haproxy fails loudly
 * (apt-get install -y haproxy).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { freePort, ROOT, sleep } from '../e2e/helpers.js';

const HAPROXY = '/usr/sbin/haproxy';

export interface ShippedProxy {
  port: number;
  /** Everything HAProxy wrote so far (its log goes to stdout). */
  output(): string;
  stop(): Promise<void>;
}

/** deploy/haproxy.cfg with only its listener and servers moved to this test's ports; throws if either is not where it was. */
function localConfig(proxyPort: number, nodePort: number): string {
  const shipped = readFileSync(join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8');
  const servers = /^ {4}server node1 .*\n {4}server node2 .*\n/m;
  assert.match(shipped, /^ {4}bind :8080$/m, 'the shipped listener');
  assert.match(shipped, servers, 'the shipped servers');
  return shipped.replace(/^ {4}bind :8080$/m, `    bind 127.0.0.1:${proxyPort}`).replace(servers, `    server node1 127.0.0.1:${nodePort} check\n`);
}

/** The status of GET `path` through the proxy, or null when it does not answer. */
function status(port: number, path: string): Promise<number | null> {
  return new Promise((resolve) => {
    const outgoing = request({ host: '127.0.0.1', port, path, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    outgoing.on('timeout', () => outgoing.destroy());
    outgoing.on('error', () => resolve(null)).end();
  });
}

/** Starts HAProxy (its config written into `dir`) and returns once a request gets through to the node. */
export async function startShippedProxy(nodePort: number, dir: string): Promise<ShippedProxy> {
  assert.ok(existsSync(HAPROXY), `${HAPROXY} is missing: install Debian's haproxy (apt-get install -y haproxy)`);
  const port = await freePort();
  const config = join(dir, 'haproxy.cfg');
  writeFileSync(config, localConfig(port, nodePort));
  const proxy = spawn(HAPROXY, ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proxy.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  proxy.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  // Never outlives the test run, whatever happened.
  const kill = () => proxy.kill('SIGKILL');
  process.once('exit', kill);
  const stop = async () => {
    process.off('exit', kill);
    if (proxy.exitCode !== null || proxy.signalCode !== null) return;
    const exited = new Promise((resolve) => proxy.once('exit', resolve));
    proxy.kill('SIGKILL');
    await exited;
  };
  // Up once the node passes its health check and a request gets through.
  const deadline = Date.now() + 15_000;
  while ((await status(port, '/healthz')) !== 200) {
    if (Date.now() >= deadline || proxy.exitCode !== null) {
      await stop();
      assert.fail(`HAProxy did not come up:\n${output}`);
    }
    await sleep(200);
  }
  return { port, output: () => output, stop };
}
