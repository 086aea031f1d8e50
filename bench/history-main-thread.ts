/**
 * Main-thread CPU per history answer, before and after rendering moved to
 * worker threads, in one process and one run: `node --import tsx
 * bench/history-main-thread.ts` (BENCH_DATABASE_URL adds PostgreSQL).
 *
 * "before" is the server as it was: SQLite ranges read in the range pool,
 * PostgreSQL read with async queries, and the candles rendered, the body
 * made into bytes and compressed on the event loop (once per ETag and
 * second, as writeRendered did). "after" is HistoryAnswers with its render
 * pool. Both answer the same questions, alternating in blocks, over fresh
 * stores of their own (so neither warms the other's cache); the main thread's
 * own CPU time is read from Linux's per-thread schedstat, which leaves worker
 * threads out and does not count time the thread waited for a core.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/domain/clock.js';
import type { Reference } from '../src/domain/reference.js';
import { ZoneTime } from '../src/domain/time.js';
import { Buckets } from '../src/history/ranges/buckets.js';
import { HistoryReader } from '../src/history/history-reader.js';
import { HistoryRecorder } from '../src/history/record/recorder.js';
import { CompressedOnce } from '../src/render/compressed-once.js';
import { HistoryAnswers, type HistoryQuestion } from '../src/history/answers/history-answers.js';
import type { StoredCandle } from '../src/domain/candle.js';
import { HistoryRepository } from '../src/store/candle-tables.js';
import { RangeReadPool, sqliteRangeThreads } from '../src/history/ranges/read-threads.js';
import { Store } from '../src/store/store.js';
import { threadCpuMs } from '../src/domain/thread-cpu.js';

const M = 60_000;
const NOW = Date.parse('2026-11-21T10:30:00Z');
const DAYS = 20;
const KEYS = ['usd_free', 'eur_free', 'coin_emami', 'gold_18k'];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PER_BLOCK = Number(process.env.BENCH_ANSWERS ?? 60);

interface Side {
  name: string;
  answer(question: HistoryQuestion): Promise<void>;
  close(): Promise<void>;
}

const time = new ZoneTime('Asia/Tehran', new ManualClock(NOW));
const buckets = new Buckets(time);
const reference = (key: string) => ({ key, title: key, unit: 'ریال', currency: 'IRR', per: 'unit' }) as Reference;

async function seeded(databaseUrl: string | null, tag: string): Promise<{ store: Store; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'nerkh-bench-history-'));
  const schema = databaseUrl ? `nerkh_bench_hist_${tag}_${process.pid}` : undefined;
  const store = await Store.open({ databaseUrl, dataDir: dir, schema, rangeThreads: sqliteRangeThreads });
  for (const key of KEYS) {
    const rows: StoredCandle[] = [];
    let level = 1_000_000;
    for (let i = 0; i < DAYS * 1440; i++) {
      const start = NOW - (DAYS * 1440 - i) * M;
      level += Math.round((Math.random() - 0.5) * 200);
      rows.push({ grain: 'minute', reference: key, candle: { start, open: String(level), high: String(level + 90), low: String(level - 70), close: String(level + 10), points: 3, source: 'alpha', closeAt: start + 1000 } });
    }
    await store.history.write(rows);
  }
  return { store, dir };
}

/** The server as it was: rendered on the event loop, compressed there once per ETag and second. */
function before(store: Store, databaseUrl: string | null, recorder: HistoryRecorder | null): Side {
  const pool = databaseUrl ? null : new RangeReadPool(store.connection.sqliteFile!);
  const repository = new HistoryRepository(store.connection.db, store.connection.sqlite, pool, null);
  const answers = new HistoryAnswers(new HistoryReader(repository, buckets, store.health, 90, recorder), time);
  const compressed = new CompressedOnce();
  return {
    name: 'before',
    async answer(question) {
      const answer = await answers.answer(question);
      const body = typeof answer.body === 'string' ? answer.body : answer.body.toString();
      if (question.encoding !== null) compressed.get(answer.etag, body, question.encoding);
      Buffer.from(body);
    },
    async close() {
      await answers.close();
      await pool?.close();
    },
  };
}

function after(store: Store, recorder: HistoryRecorder | null): Side {
  const answers = new HistoryAnswers(new HistoryReader(store.history, buckets, store.health, 90, recorder), time);
  return {
    name: 'after',
    async answer(question) {
      await answers.answer(question);
    },
    close: () => answers.close(),
  };
}

/** Random 1,000-minute ranges over the stored days, gzip accepted (what most clients send). */
function randomRange(): HistoryQuestion {
  const key = KEYS[Math.floor(Math.random() * KEYS.length)]!;
  const end = NOW - Math.floor(Math.random() * (DAYS * 1440 - 1000)) * M;
  return { reference: reference(key), interval: '1m', from: end - 1000 * M, to: end, toman: false, now: NOW, encoding: 'gzip', holds: () => false };
}

/** The latest 1,000 minutes of a popular reference, as every chart asks (the same second: one generated_at). */
function latestRange(): HistoryQuestion {
  const key = KEYS[Math.floor(Math.random() * 2)]!;
  const to = buckets.next(buckets.start(NOW, '1m'), '1m');
  return { reference: reference(key), interval: '1m', from: to - 1000 * M, to, toman: false, now: NOW, encoding: 'gzip', holds: () => false };
}

async function block(side: Side, ask: () => HistoryQuestion): Promise<{ mainMs: number; processMs: number }> {
  const cpu = threadCpuMs();
  const usage = process.cpuUsage();
  for (let i = 0; i < PER_BLOCK; i++) await side.answer(ask());
  const used = process.cpuUsage(usage);
  return { mainMs: (threadCpuMs() - cpu) / PER_BLOCK, processMs: (used.user + used.system) / 1000 / PER_BLOCK };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
const spread = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

async function scenario(label: string, sides: [Side, Side], ask: () => HistoryQuestion): Promise<string> {
  const seen: Record<string, { main: number[]; process: number[] }> = { before: { main: [], process: [] }, after: { main: [], process: [] } };
  // Warm both: threads started, modules loaded.
  for (const side of sides) for (let i = 0; i < 10; i++) await side.answer(ask());
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides : [sides[1], sides[0]];
    const result: Record<string, number> = {};
    for (const side of order) {
      const { mainMs, processMs } = await block(side, ask);
      seen[side.name]!.main.push(mainMs);
      seen[side.name]!.process.push(processMs);
      result[side.name] = mainMs;
    }
    ratios.push(result.after! / result.before!);
  }
  const b = seen.before!;
  const a = seen.after!;
  return (
    `| ${label} | ${median(b.main).toFixed(2)} (${spread(b.main)}) | ${median(a.main).toFixed(2)} (${spread(a.main)}) | ` +
    `${median(ratios).toFixed(2)} (${spread(ratios)}) | ${median(b.process).toFixed(2)} | ${median(a.process).toFixed(2)} |`
  );
}

async function dialect(name: string, databaseUrl: string | null): Promise<string[]> {
  const old = await seeded(databaseUrl, 'b');
  const fresh = await seeded(databaseUrl, 'a');
  const lines: string[] = [];
  try {
    lines.push(await scenario(`${name}: random 1,000-minute ranges, gzip`, [before(old.store, databaseUrl, null), after(fresh.store, null)], randomRange));
    // A recorder on each, as on the ingest leader: the latest range is versioned by it (no new value meanwhile).
    const recorders = [new HistoryRecorder(old.store.history, time, old.store.health, 90), new HistoryRecorder(fresh.store.history, time, fresh.store.health, 90)];
    await Promise.all(recorders.map((recorder) => recorder.load()));
    lines.push(await scenario(`${name}: latest 1,000 minutes of 2 popular references, gzip`, [before(old.store, databaseUrl, recorders[0]!), after(fresh.store, recorders[1]!)], latestRange));
    await Promise.all(recorders.map((recorder) => recorder.stop()));
    if (databaseUrl) {
      // The floor of the other PostgreSQL design (query on the event loop, render in a worker): the query alone, rows parsed here.
      const repository = new HistoryRepository(old.store.connection.db);
      const cpu = threadCpuMs();
      for (let i = 0; i < PER_BLOCK; i++) {
        const question = randomRange();
        await repository.range('minute', question.reference.key, question.from, question.to);
      }
      lines.push(`| ${name}: the 1,000-row query alone on the event loop | ${((threadCpuMs() - cpu) / PER_BLOCK).toFixed(2)} | | | | |`);
    }
  } finally {
    for (const { store, dir } of [old, fresh]) {
      await store.close({ dropSchema: databaseUrl !== null });
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return lines;
}

const lines = [
  `${new Date().toISOString()}, ${ROUNDS} rounds of ${PER_BLOCK} answers per side, alternating; main-thread CPU ms per answer: median (min–max over rounds)`,
  '',
  '| case | before: main thread | after: main thread | after/before (min–max) | before: all threads | after: all threads |',
  '|---|---|---|---|---|---|',
  ...(await dialect('SQLite', null)),
  ...(process.env.BENCH_DATABASE_URL ? await dialect('PostgreSQL', process.env.BENCH_DATABASE_URL) : []),
];
console.log(lines.join('\n'));
