/**
 * `node --import tsx bench/webhooks-dead-receivers.ts`: one account's dead webhook receivers
 * against everyone else's deliveries. One real `nerkh serve` (SQLite, real schedule) with a file
 * source whose dollar moves across ten thresholds and back every second, so each rule fires once a
 * second:
 *
 * - account `noisy`: ten endpoints on a receiver that takes each request and never answers (a
 *   dead receiver that hangs until the sender's 10 s timeout; with BENCH_DEAD=fail it answers 503
 *   at once instead), ten rules each, and one healthy endpoint with one rule on the same moves;
 * - account `calm`: one healthy endpoint whose rule (on the euro) crosses once, CALM_AT seconds in.
 *
 * Reported every 15 s: pending deliveries (all, and the most any one endpoint holds), the
 * delivery log's rows (and the events they fold), the attempts the dead receiver took, and how late
 * the noisy account's healthy endpoint got its deliveries (receipt less the event's `timestamp`,
 * which has whole seconds, so ±1 s); at the end, how long after the euro moved `calm` got its
 * first delivery. With BENCH_BEFORE (a built checkout of an earlier version) that version runs the
 * same attack after this one. Never part of `npm test`.
 */
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Sqlite from 'better-sqlite3';
import { BIN, freePort, startServer } from './processes.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 90);
const CALM_AT = Number(process.env.BENCH_CALM_AT ?? 30);
const SAMPLE_EVERY_S = 15;
const DEAD_ENDPOINTS = 10;
const RULES_EACH = 10;
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : null;
const DEAD_ANSWERS_AT_ONCE = process.env.BENCH_DEAD === 'fail';
const LOW = 1_000_000;
const HIGH = 1_000_100;

interface Sample {
  at: number;
  pending: number;
  maxPendingPerEndpoint: number;
  logRows: number;
  logEvents: number;
  deadAttempts: number;
  /** Lateness (ms) of the noisy account's healthy deliveries received in this window. */
  late: number[];
}

interface Result {
  version: string;
  samples: Sample[];
  calmFirstMs: number | null;
}

/** Receivers on 127.0.0.1: `/dead/…` never answers; anything else answers 200 and is timed. */
class Receivers {
  deadAttempts = 0;
  readonly received: { path: string; at: number; timestamp: number }[] = [];
  private readonly held = new Set<ServerResponse>();
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url?.startsWith('/dead/')) {
          this.deadAttempts++;
          if (DEAD_ANSWERS_AT_ONCE) return void response.writeHead(503).end();
          this.held.add(response);
          response.on('close', () => this.held.delete(response));
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
        this.received.push({ path: request.url ?? '', at: Date.now(), timestamp: Date.parse(body.timestamp) });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.server.closeAllConnections();
    await new Promise((done) => this.server.close(done));
  }
}

async function run(version: string, bin: string): Promise<Result> {
  const work = mkdtempSync(join(tmpdir(), 'nerkh-bench-hooks-'));
  const children: ChildProcess[] = [];
  const receivers = new Receivers();
  let mover: NodeJS.Timeout | null = null;
  try {
    const base = await receivers.start();
    const sourcePath = join(work, 'rates.json');
    let usd = LOW;
    let eur = 1_100_000;
    const write = () => writeFileSync(sourcePath, JSON.stringify({ updated_at: new Date().toISOString(), items: { ir_fx_free_usd: usd, ir_fx_free_eur: eur } }));
    write();
    writeFileSync(join(work, 'config.json'), JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: sourcePath, max_age_seconds: 120, poll_seconds: 0.2 }], webhooks: { allow_private: true } }));
    const env = { ...process.env, NERKH_DATA_DIR: join(work, 'data'), NERKH_CONFIG: join(work, 'config.json'), NERKH_LOG_LEVEL: 'warn', NERKH_PORT: String(await freePort()), NERKH_HOST: '127.0.0.1' };
    await startServer(env, children, bin);
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, [bin, ...args], { env });
    await cli('accounts', 'add', 'noisy', '--plan', 'enterprise');
    await cli('accounts', 'add', 'calm', '--plan', 'pro');
    const rules = Array.from({ length: RULES_EACH }, (_, i) => ['--rule', `usd_free>${LOW + 1 + i}`]).flat();
    for (let i = 0; i < DEAD_ENDPOINTS; i++) await cli('webhooks', 'add', 'noisy', `${base}/dead/${i}`, ...rules);
    await cli('webhooks', 'add', 'noisy', `${base}/ok/noisy`, '--rule', `usd_free>${LOW + 50}`);
    await cli('webhooks', 'add', 'calm', `${base}/ok/calm`, '--rule', 'eur_free>1150000');
    // The leader loads endpoints within a second of their change.
    await new Promise((done) => setTimeout(done, 1500));

    const db = new Sqlite(join(work, 'data', 'nerkh.sqlite'), { readonly: true });
    const folds = db.prepare("select count(*) as n from pragma_table_info('webhook_log') where name = 'count'").get() as { n: number };
    const logQuery = db.prepare(folds.n > 0 ? 'select count(*) as rows, coalesce(sum("count"), 0) as events from webhook_log' : 'select count(*) as rows, count(*) as events from webhook_log');
    const pendingQuery = db.prepare("select count(*) as n from webhook_outbox where state = 'pending' group by endpoint_id");

    const started = Date.now();
    let calmMovedAt: number | null = null;
    mover = setInterval(() => {
      usd = usd === LOW ? HIGH : LOW;
      if (calmMovedAt === null && Date.now() - started >= CALM_AT * 1000) {
        eur = 1_200_000;
        calmMovedAt = Date.now();
      }
      write();
    }, 500);

    const samples: Sample[] = [];
    let seen = 0;
    for (let s = SAMPLE_EVERY_S; s <= SECONDS; s += SAMPLE_EVERY_S) {
      await new Promise((done) => setTimeout(done, started + s * 1000 - Date.now()));
      const pending = (pendingQuery.all() as { n: number }[]).map((row) => row.n);
      const log = logQuery.get() as { rows: number; events: number };
      const noisy = receivers.received.slice(seen).filter((r) => r.path === '/ok/noisy');
      seen = receivers.received.length;
      samples.push({
        at: s,
        pending: pending.reduce((a, b) => a + b, 0),
        maxPendingPerEndpoint: Math.max(0, ...pending),
        logRows: log.rows,
        logEvents: log.events,
        deadAttempts: receivers.deadAttempts,
        late: noisy.map((r) => r.at - r.timestamp),
      });
      console.log(`${version} ${s} s: ${JSON.stringify({ ...samples.at(-1), late: summary(samples.at(-1)!.late) })}`);
    }
    db.close();
    const calm = receivers.received.find((r) => r.path === '/ok/calm');
    return { version, samples, calmFirstMs: calm && calmMovedAt !== null ? calm.at - calmMovedAt : null };
  } finally {
    if (mover) clearInterval(mover);
    for (const child of children) child.kill('SIGKILL');
    await receivers.close();
    rmSync(work, { recursive: true, force: true });
  }
}

function summary(late: number[]): string {
  if (late.length === 0) return 'none received';
  const sorted = [...late].sort((a, b) => a - b);
  return `${late.length} received, ${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(1)}–${(sorted.at(-1)! / 1000).toFixed(1)} s late (median–max)`;
}

async function main() {
  const results = [await run('this version', BIN)];
  if (BEFORE) results.push(await run(`before (${BEFORE})`, join(BEFORE, 'bin', 'nerkh.js')));
  for (const result of results) {
    console.log(`\n${result.version}: ${DEAD_ENDPOINTS} dead endpoints (${DEAD_ANSWERS_AT_ONCE ? 'answering 503 at once' : 'hanging'}) × ${RULES_EACH} rules firing every second`);
    console.log('| after | pending | most on one endpoint | log rows (events) | dead attempts | noisy account, healthy endpoint |');
    console.log('|---|---|---|---|---|---|');
    for (const s of result.samples) console.log(`| ${s.at} s | ${s.pending} | ${s.maxPendingPerEndpoint} | ${s.logRows} (${s.logEvents}) | ${s.deadAttempts} | ${summary(s.late)} |`);
    const calm = result.calmFirstMs === null ? `none within ${SECONDS - CALM_AT} s` : `${(result.calmFirstMs / 1000).toFixed(1)} s`;
    console.log(`calm account's first delivery after its event: ${calm}`);
  }
}

await main();
