/**
 * `node --import tsx bench/stream-alerts.ts`: what `?alerts=` costs the hub's
 * fan-out, in process (no sockets: the hub's own work only). 10,000 streams
 * in one group get BENCH_ALERT_EVENTS `rates` events; timed with no stream
 * holding rules, with 10 % holding five, and with all holding five. Streams
 * without rules should cost the same in every case. Prints ns per stream
 * per event (median of the runs).
 */
import { Writable } from 'node:stream';
import { parseAlertList } from '../src/domain/alert-rule.js';
import { ManualClock } from '../src/domain/clock.js';
import { NO_DAY_FIELDS, type Rate } from '../src/domain/rate.js';
import { ZoneTime } from '../src/domain/time.js';
import { prepareRate } from '../src/live/prepare.js';
import { RefreshTiers } from '../src/live/refresh-tiers.js';
import type { PreparedRate, Snapshot } from '../src/live/snapshot.js';
import { StreamAlerts } from '../src/stream/alerts.js';
import { StreamHub } from '../src/stream/hub.js';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const EVENTS = Number(process.env.BENCH_ALERT_EVENTS ?? 200);
const RUNS = 5;
const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));
const time = new ZoneTime('Asia/Tehran', clock);
const KEYS = ['usd_free', 'eur_free'];
const RULES = 'usd_free>1000100;usd_free<999900;eur_free>2000100;usd_free.change_percent>=1;eur_free.change_percent<=-1';

function snapshot(version: number): Snapshot {
  const rates = new Map<string, PreparedRate>();
  for (const [i, key] of KEYS.entries()) {
    // Swings across the thresholds, so rules fire and re-arm along the way.
    const value = String((i + 1) * 1_000_000 + ((version * 37) % 400) - 200);
    const rate: Rate = { key, title: key, value, unit: 'ریال', currency: 'IRR', per: 'unit', source_key: key, updated_at: clock.now(), status: 'ok', source: 'a', ...NO_DAY_FIELDS, change_percent: String((version % 5) - 2) };
    rates.set(key, prepareRate(rate, time));
  }
  return { version, builtAt: clock.now(), rates, lastUpdate: null, counts: { ok: rates.size, stale: 0, unavailable: 0 } };
}

const sink = () => new Writable({ write: (_chunk, _encoding, done) => done(), highWaterMark: 1 << 30 });

function run(withRules: number): number {
  const history = new RefreshTiers(snapshot(0), 60);
  const hub = new StreamHub(history, time, { slice: { streams: Infinity } });
  const rules = parseAlertList(RULES, (name) => (KEYS.includes(name) ? name : undefined));
  for (let i = 0; i < STREAMS; i++) {
    const alerts = i < withRules ? new StreamAlerts(rules, (ms) => time.format(ms)) : null;
    hub.open(sink(), { intervalSeconds: 0, keys: KEYS, tag: 'both', unit: 'rial' }, () => {}, alerts);
  }
  const started = process.hrtime.bigint();
  for (let version = 1; version <= EVENTS; version++) history.push(snapshot(version));
  const ns = Number(process.hrtime.bigint() - started);
  hub.stop();
  return ns / STREAMS / EVENTS;
}

const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [label, withRules] of [
  ['no stream with rules', 0],
  ['10 % with 5 rules', STREAMS / 10],
  ['every stream with 5 rules', STREAMS],
] as const) {
  run(withRules); // warm-up
  const runs = Array.from({ length: RUNS }, () => run(withRules));
  console.log(`${label}: ${median(runs).toFixed(0)} ns per stream per event (runs: ${runs.map((ns) => ns.toFixed(0)).join(', ')})`);
}
