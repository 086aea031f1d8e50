/**
 * A large `nerkh history import` (24,000 rows: many batches), as real
 * processes. On SQLite, next to a serving node on the same file whose feed
 * keeps changing (so it writes every second): the node stays ready and
 * answers history and `?at=` all along, and never logs the store as
 * unreachable. On PostgreSQL: the import says how far it is. On both,
 * importing the same file again writes nothing, says so, and leaves every
 * candle as it was. How fast a 200,000-row import runs is a bench figure.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';
import { Store } from '../../src/store/store.js';
import { assertBuilt, cleanEnv, cliOk, get, runCli, sleep, startServer, type ServerProcess } from '../e2e/helpers.js';
import { tempDir, writeSource } from '../support/env.js';
import { needs, POSTGRES_URL } from '../support/services.js';

const DAY = 86_400_000;
const MINUTE = 60_000;
const time = new ZoneTime('Asia/Tehran');
const buckets = new Buckets(time);
/** 4 references × 6,000 minutes (some 4 days, inside the 90-day minute retention): one value a minute. */
const REFERENCES = ['usd_free', 'eur_free', 'gbp_free', 'aed_free'];
const MINUTES = 6_000;
const ROWS = REFERENCES.length * MINUTES;
/** The imported stretch ends at local midnight two days ago. */
const END = buckets.startOfDate(...buckets.localDate(Date.now() - 2 * DAY));
const FIRST = END - MINUTES * MINUTE;
const valueOf = (minute: number) => String(1_000_000 + (minute % 997));
/** Minute, hourly and daily candles the file makes: the stretch ends at local midnight, so every hour and day it touches is whole but the first. */
const CANDLES = { minute: ROWS, hour: REFERENCES.length * Math.ceil(MINUTES / 60), day: REFERENCES.length * Math.ceil(MINUTES / 1440) };
const TOTAL = CANDLES.minute + CANDLES.hour + CANDLES.day;

assertBuilt();

const files = tempDir('nerkh-import-large-');
const csv = join(files.path, 'history.csv');
before(() => {
  const lines = ['key,time,value'];
  for (const reference of REFERENCES) for (let i = 0; i < MINUTES; i++) lines.push(`${reference},${time.format(FIRST + i * MINUTE + 5000)},${valueOf(i)}`);
  writeFileSync(csv, `${lines.join('\n')}\n`);
});
after(() => files.cleanup());

/** Every stored candle of the imported stretch, as one digest and counts per grain: what "nothing changed" is checked against. */
async function storedDigest(options: { databaseUrl: string | null; dataDir: string }): Promise<{ counts: Record<string, number>; digest: string }> {
  const store = await Store.open(options);
  try {
    const hash = createHash('sha256');
    const counts: Record<string, number> = {};
    for (const grain of ['minute', 'hour', 'day'] as const) {
      counts[grain] = 0;
      for (const reference of REFERENCES) {
        for (const candle of await store.history.range(grain, reference, FIRST - DAY, END)) {
          counts[grain]++;
          hash.update(JSON.stringify([grain, reference, candle]));
        }
      }
    }
    return { counts, digest: hash.digest('hex') };
  } finally {
    await store.close();
  }
}

const SUMMARY = new RegExp(`^imported ${ROWS} rows from .* in [\\d.]+ s(?: \\(\\d+ rows/s\\))?: ${CANDLES.minute} minute, ${CANDLES.hour} hourly and ${CANDLES.day} daily candles written \\(${TOTAL} new, 0 updated\\)\\n$`);
const NOTHING_CHANGED = new RegExp(`^read ${ROWS} rows from .*: nothing changed \\(${TOTAL} candles already present\\)\\n$`);

describe('SQLite: a serving node answers all through a large import into its own file', () => {
  const dir = tempDir('nerkh-import-serving-');
  const dataDir = join(dir.path, 'var');
  const feed = join(dir.path, 'alpha.json');
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let key: string;

  before(async () => {
    writeSource(feed, { ir_fx_free_usd: 1_000_000 });
    writeFileSync(join(dir.path, 'nerkh.config.json'), JSON.stringify({ sources: [{ name: 'alpha', type: 'file', path: feed, poll_seconds: 0.2 }] }));
    env = cleanEnv({ NERKH_CONFIG: join(dir.path, 'nerkh.config.json'), NERKH_DATA_DIR: dataDir, NERKH_LOG_LEVEL: 'warn' });
    server = await startServer(env as Record<string, string>);
    await cliOk(env, ['accounts', 'add', 'backfiller', '--plan', 'enterprise']);
    key = (JSON.parse((await cliOk(env, ['keys', 'issue', 'backfiller', '--json'])).stdout) as { key: string }).key;
    const deadline = Date.now() + 10_000;
    while (((await get(server.base, '/readyz')).status !== 200 || (await get(server.base, '/v1/rates/usd_free', key)).status !== 200) && Date.now() < deadline) await sleep(100);
  });
  after(async () => {
    await server?.kill();
    dir.cleanup();
  });

  it('stays ready, answers history and ?at= throughout, logs no unreachable store; a second import changes nothing', async () => {
    const at = FIRST + 1000 * MINUTE;
    const paths = {
      readyz: '/readyz',
      history: `/v1/rates/usd_free/history?interval=1h&from=${encodeURIComponent(time.format(END - DAY))}&to=${encodeURIComponent(time.format(END))}`,
      at: `/v1/rates/usd_free?at=${encodeURIComponent(time.format(at))}`,
    };
    const answers: { path: string; status: number; ms: number; at: number }[] = [];
    /** `work` while the node is asked every 50 ms (only then: the digests below would stall this process's own timing). */
    const polled = async <T>(work: () => Promise<T>): Promise<T> => {
      let polling = true;
      const poller = (async () => {
        for (let tick = 0; polling; tick++) {
          // The feed moves, so the node records (and writes) every second while the import runs.
          writeSource(feed, { ir_fx_free_usd: 1_000_000 + answers.length + tick });
          await Promise.all(
            Object.entries(paths).map(async ([name, path]) => {
              const began = performance.now();
              const response = await get(server.base, path, name === 'readyz' ? undefined : key).catch(() => ({ status: 0 }));
              answers.push({ path: name, status: response.status, ms: performance.now() - began, at: Date.now() });
            }),
          );
          await sleep(50);
        }
      })();
      try {
        return await work();
      } finally {
        polling = false;
        await poller;
      }
    };
    const first = await polled(() => runCli(env, ['history', 'import', csv], 120_000));
    const stored = await storedDigest({ databaseUrl: null, dataDir });
    const second = await polled(() => runCli(env, ['history', 'import', csv], 120_000));
    const digests = [stored, await storedDigest({ databaseUrl: null, dataDir })];
    const slowest = answers.reduce((a, b) => (b.ms > a.ms ? b : a));
    console.log(`# ${answers.length} answers during both imports; slowest ${slowest.path} in ${Math.round(slowest.ms)} ms`);
    assert.ok(answers.length >= 6, `polled throughout (${answers.length} answers)`);
    const refused = answers.filter((answer) => answer.status !== 200);
    const span = refused.length > 0 ? refused.at(-1)!.at - refused[0]!.at : 0;
    assert.equal(refused.length, 0, `every answer a 200, never 503; ${refused.length} were not, over ${span} ms: ${JSON.stringify(refused.slice(0, 5))}`);
    assert.doesNotMatch(server.stdout + server.stderr, /store unreachable|"level":50/, server.output());

    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, SUMMARY);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, NOTHING_CHANGED);
    assert.deepEqual(digests[0]!.counts, CANDLES);
    assert.deepEqual(digests[1], digests[0], 'the second import changed no candle');


    // What the import wrote is served: the value of the minute that ended at `at`.
    const rate = ((await get(server.base, paths.at, key)).json as { rates: { value: number; status: string }[] }).rates[0]!;
    assert.deepEqual([rate.status, rate.value], ['historical', Number(valueOf(999))]);
  });
});

describe('PostgreSQL: a large import, with progress', needs('postgres'), () => {
  const dir = tempDir('nerkh-import-pg-');
  const database = `nerkh_import_large_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const admin = POSTGRES_URL ? new pg.Pool({ connectionString: POSTGRES_URL, max: 1 }) : null;
  let databaseUrl: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    await admin!.query(`create database ${database}`);
    const url = new URL(POSTGRES_URL!);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
    env = cleanEnv({ NERKH_DATA_DIR: join(dir.path, 'var'), NERKH_DATABASE_URL: databaseUrl });
    // Only `serve` creates a store (an admin command refuses to): make it as serve does.
    await (await Store.open({ databaseUrl, dataDir: join(dir.path, 'var') })).close();
  });
  after(async () => {
    await admin?.query(`drop database if exists ${database} with (force)`);
    await admin?.end();
    dir.cleanup();
  });

  it('imports, printing progress; the same file again changes nothing', async () => {
    const began = Date.now();
    const first = await runCli(env, ['history', 'import', csv, '--progress', '0.01'], 120_000);
    const took = Date.now() - began;
    console.log(`# PostgreSQL: ${ROWS} rows imported in ${took} ms`);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, SUMMARY);
    // Off a terminal, a line every hundredth of a second (as asked): rows read while checking, then rows and candles written, each with a rate.
    const progress = first.stderr.trim().split('\n');
    assert.ok(progress.length >= 2, first.stderr);
    const line = new RegExp(`^nerkh: .*history\\.csv: (\\d+ rows read|\\d+ of ${ROWS} rows imported, \\d+ candles written) \\(\\d+ rows/s\\)$`);
    for (const printed of progress) assert.match(printed, line);
    assert.ok(progress.some((line) => / rows imported, /.test(line)), first.stderr);

    const stored = await storedDigest({ databaseUrl, dataDir: join(dir.path, 'var') });
    assert.deepEqual(stored.counts, CANDLES);
    const second = await cliOk(env, ['history', 'import', csv, '--progress', '0']);
    assert.match(second.stdout, NOTHING_CHANGED);
    assert.equal(second.stderr, '', '--progress 0 prints none');
    assert.deepEqual(await storedDigest({ databaseUrl, dataDir: join(dir.path, 'var') }), stored, 'the second import changed no candle');
  });
});
