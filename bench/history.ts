/**
 * The history part of `npm run bench`: a year of candles for 20 references
 * in the store the bench server uses, random 1,000-candle range queries at
 * the bench's connection count, the store's size per reference-year, and
 * what recording costs a demo server whose feeder moves every value.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { parseWrk } from './load.js';
import type { Candle, StoredCandle } from '../src/domain/candle.js';
import { ZoneTime } from '../src/domain/time.js';
import { Buckets } from '../src/history/ranges/buckets.js';


const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The references seeded: popular ones of every kind of digits (rial integers, dollar decimals, crypto). */
export const HISTORY_REFERENCES = [
  'usd_free', 'eur_free', 'coin_emami', 'gold_18k', 'gold_ounce', 'coin_bahar', 'coin_half', 'coin_quarter', 'gold_mithqal', 'usdt_irr',
  'gbp_free', 'aed_free', 'try_free', 'cny_free', 'silver_ounce', 'btc_usd', 'eth_usd', 'oil_brent', 'coin_gerami', 'gold_24k',
];
export const MINUTE_DAYS = 90;
export const YEAR_DAYS = 365;

export interface SeedResult {
  references: number;
  candles: { minute: number; hour: number; day: number };
  ms: number;
  /** Bytes the store grew by (SQLite file and its WAL after a checkpoint). */
  bytes: number;
}

/** Bytes of the SQLite files in a data directory (database, WAL, shared memory). */
export function storeBytes(dataDir: string): number {
  return readdirSync(dataDir)
    .filter((name) => name.startsWith('nerkh.sqlite'))
    .reduce((sum, name) => sum + statSync(join(dataDir, name)).size, 0);
}

/**
 * A year up to now for each reference through the store's own repository:
 * minute candles for the last 90 days, hourly candles for the year (those of
 * the last 90 days rolled up from the minutes), daily candles rolled up from
 * the hours. Values walk randomly around a level with the digits of real
 * prices (integers of rials, dollars to the cent).
 */
export async function seedHistory(dataDir: string, references: readonly string[], now = Date.now(), databaseUrl: string | null = null, schema?: string): Promise<SeedResult> {
  const { Store } = await import('../src/store/store.js');
  const store = await Store.open({ databaseUrl, dataDir, schema });
  const started = Date.now();
  const before = databaseUrl ? 0 : storeBytes(dataDir);
  const counts = { minute: 0, hour: 0, day: 0 };
  const buckets = zoneBuckets();
  try {
    // Candles start where the server's buckets do: hours and days of the zone (Tehran: hours at :30 UTC).
    const end = buckets.start(now, '1d');
    const yearStart = end - YEAR_DAYS * DAY;
    const minuteStart = end - MINUTE_DAYS * DAY;
    for (const [index, reference] of references.entries()) {
      const decimals = index % 5 === 4 ? 2 : 0;
      const level = decimals ? 2000 + index * 100 : 1_000_000 * (index + 1);
      let price = level;
      const next = (sigma: number) => {
        price = Math.max(level * 0.3, price + 0.01 * (level - price) + price * sigma * (Math.random() - 0.5));
        return price.toFixed(decimals);
      };
      const rows: StoredCandle[] = [];
      const flush = async (force = false) => {
        if (rows.length < 50_000 && !force) return;
        await store.history.write(rows.splice(0));
      };
      let day = null as Candle | null;
      for (let hourStart = yearStart; hourStart < end; hourStart += HOUR) {
        let hour: Candle;
        if (hourStart < minuteStart) {
          hour = candle(hourStart, next(0.004), next(0.004), 1800);
        } else {
          hour = { ...candle(hourStart, '0', '0', 0) };
          for (let m = 0; m < 60; m++) {
            const minute = candle(hourStart + m * MINUTE, next(0.0005), next(0.0005), 30);
            rows.push({ grain: 'minute', reference, candle: minute });
            counts.minute++;
            merge(hour, minute, m === 0);
          }
        }
        rows.push({ grain: 'hour', reference, candle: hour });
        counts.hour++;
        const dayStart = buckets.start(hourStart, '1d');
        if (day?.start !== dayStart) {
          if (day) rows.push({ grain: 'day', reference, candle: day });
          day = { ...hour, start: dayStart };
          counts.day++;
        } else {
          merge(day, hour, false);
        }
        await flush();
      }
      if (day) rows.push({ grain: 'day', reference, candle: day });
      await flush(true);
    }
  } finally {
    await store.close();
  }
  const ms = Date.now() - started;
  if (databaseUrl) return { references: references.length, candles: counts, ms, bytes: 0 };
  // Fold the WAL into the file so its size is the data's.
  const Sqlite = (await import('better-sqlite3')).default;
  const file = new Sqlite(join(dataDir, 'nerkh.sqlite'));
  file.pragma('wal_checkpoint(TRUNCATE)');
  file.close();
  return { references: references.length, candles: counts, ms, bytes: storeBytes(dataDir) - before };
}

/** The bench server's buckets: the default zone (Asia/Tehran, no daylight saving). */
function zoneBuckets(): Buckets {
  return new Buckets(new ZoneTime('Asia/Tehran'));
}

function candle(start: number, open: string, close: string, points: number): Candle {
  const [high, low] = Number(open) >= Number(close) ? [open, close] : [close, open];
  return { start, open, high, low, close, points, source: 'alpha', closeAt: start + 59_000 };
}

function merge(into: Candle, later: Candle, first: boolean): void {
  if (first) Object.assign(into, { open: later.open, high: later.high, low: later.low });
  if (Number(later.high) > Number(into.high)) into.high = later.high;
  if (Number(later.low) < Number(into.low)) into.low = later.low;
  into.close = later.close;
  into.points += later.points;
  into.closeAt = later.closeAt;
}

/** Bytes PostgreSQL holds for the history tables (with their indexes) in a schema. */
export async function postgresBytes(databaseUrl: string, schema: string): Promise<number> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`vacuum analyze ${schema}.history_minute, ${schema}.history_hour, ${schema}.history_day`);
    const { rows } = await client.query<{ bytes: string }>(
      `select sum(pg_total_relation_size(format('%I.%I', $1::text, t)::regclass))::text as bytes from unnest(array['history_minute','history_hour','history_day']) as t`,
      [schema],
    );
    return Number(rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

export async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

/** Paths of random ranges of exactly 1,000 candles of `interval` inside what was seeded, whole minutes in UTC. */
export function randomRanges(references: readonly string[], interval: '1m' | '15m' | '1h', count: number, now = Date.now()): string[] {
  const step = { '1m': MINUTE, '15m': 15 * MINUTE, '1h': HOUR }[interval];
  const end = zoneBuckets().start(now, '1d');
  // Minute-based intervals read minute candles, kept 90 days; a day of margin keeps every range inside the retention.
  const earliest = end - (interval === '1h' ? YEAR_DAYS : MINUTE_DAYS - 1) * DAY;
  const span = 1000 * step;
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    // `earliest` is a local midnight, so whole steps from it are candle starts of every interval here.
    const from = earliest + Math.floor((Math.random() * (end - span - earliest)) / step) * step;
    const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
    // `to` is inclusive: the candle starting at it is the thousandth.
    paths.push(`/v1/rates/${references[i % references.length]}/history?interval=${interval}&from=${iso(from)}&to=${iso(from + span - step)}`);
  }
  return paths;
}

export interface RangeMeasurement {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

/** A wrk script asking `paths` at random, with the key: what every history load of the benches sends. */
export function writeRangesScript(work: string, key: string, paths: string[]): string {
  const script = join(work, 'ranges.lua');
  writeFileSync(
    script,
    `local paths = {\n${paths.map((p) => `  ${JSON.stringify(p)},`).join('\n')}\n}\n` +
      `math.randomseed(os.time())\nwrk.headers["x-api-key"] = ${JSON.stringify(key)}\n` +
      `request = function()\n  return wrk.format("GET", paths[math.random(#paths)])\nend\n`,
  );
  return script;
}

/** Load `paths` (picked at random per request) for `seconds` at `connections`: wrk with a Lua script when installed. */
export async function measureRanges(base: string, key: string, paths: string[], seconds: number, connections: number, work: string): Promise<RangeMeasurement> {
  if (spawnSync('wrk', ['--version']).error === undefined) {
    const script = writeRangesScript(work, key, paths);
    const output = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, base], { encoding: 'utf8' });
    const { rps, p50Ms, p99Ms, non2xx } = parseWrk(output);
    return { rps, p50Ms, p99Ms, non2xx };
  }
  const result = await autocannon({
    url: base,
    connections,
    duration: seconds,
    headers: { 'x-api-key': key },
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)]! }) }],
  });
  return { rps: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx + result.errors + result.timeouts };
}

/** A gauge's value in Prometheus text. */
export function metric(text: string, name: string): number {
  const match = new RegExp(`^${name} ([\\d.eE+-]+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

/** One GET on a connection of its own (a pooled one may have been closed by the server while idle). */
export function getOnce(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}
