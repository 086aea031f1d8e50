import { loadConfig } from './config.js';
import type { Role } from './roles/role.js';
import { ListenError } from './runtime/listen-error.js';
import { startRuntime } from './runtime/wiring.js';
import { keyHintLines } from './runtime/start-hint.js';

const DRAIN_LIMIT_MS = 9_000;
/** A server starting beside its database gives it this long to come up. */
const STORE_WAIT_MS = 30_000;

/**
 * `nerkh serve`: the only code that listens. On SIGTERM/SIGINT it hands the
 * ingest lease over (when it holds it), stops accepting, lets in-flight
 * requests finish, flushes and exits 0 within 10 s.
 */
export async function serve(role: Role = 'all'): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  const runtime = await startRuntime(config, { storeWaitMs: STORE_WAIT_MS, role });
  // Heard from here on, before the listening line: a signal that comes just after it (a supervisor
  // stopping a node it has just started) drains like any other, never ends the process unheard.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`nerkh: ${signal} received, draining`);
    const force = setTimeout(() => {
      console.error('nerkh: drain took too long; exiting');
      process.exit(0);
    }, DRAIN_LIMIT_MS);
    force.unref();
    runtime
      .close()
      .then(() => {
        console.log('nerkh: stopped');
        process.exit(0);
      })
      .catch((error: Error) => {
        console.error(`nerkh: error while stopping: ${error.message}`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const address = await runtime.app.listen({ port: config.port, host: config.host }).catch(async (error: NodeJS.ErrnoException) => {
    await runtime.close().catch(() => {});
    throw error.syscall === 'listen' ? new ListenError(config.host, config.port, error) : error;
  });
  const shared = config.redisUrl ? `role ${role}, shared through Redis` : 'one process';
  // Listening is not ready: a node that waits (for Redis, a leader, its sources) says for what, then says when it is ready.
  const waiting = runtime.waitingFor();
  console.log(`nerkh listening on ${address} (${shared}; ${waiting ? `not ready yet: ${waiting}` : `ready in ${Date.now() - started} ms`})`);
  if (waiting) void runtime.whenReady().then(() => console.log(`nerkh ready: holding rates ${Date.now() - started} ms after start`));
  void runtime.startBackground();
  if (role !== 'ingest') console.log(`  status page: ${address}/status   docs: ${address}/docs`);
  if (config.demo) console.log(`  demo sources under ${config.dataDir}/demo`);
  if (runtime.demoKey) {
    console.log(`  demo account "demo" (plan pro) created; its API key, shown once:`);
    console.log(`  ${runtime.demoKey}`);
    console.log(`  try: export KEY=${runtime.demoKey}; curl -H "x-api-key: $KEY" ${address}/v1/rates/usd_free,coin_emami,gold_18k`);
  } else if (role !== 'ingest') {
    // Only the first start of the built-in setup on an empty store creates the demo account; other starts say how to get a key.
    for (const line of keyHintLines(config, runtime.keyHint)) console.log(line);
  }
}

