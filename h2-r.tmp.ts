import { Store } from './src/store/store.js';
import { HistoryReader } from './src/history/reader.js';
import { Buckets } from './src/history/buckets.js';
import { ZoneTime } from './src/domain/time.js';
import { seedHistory, randomRanges } from './bench/history.js';
import { existsSync } from 'node:fs';
const dir = '/tmp/h2-r-data';
if (!existsSync(dir)) console.log(await seedHistory(dir, ['usd_free', 'gold_ounce']));
const store = await Store.open({ databaseUrl: null, dataDir: dir });
const time = new ZoneTime('Asia/Tehran');
const buckets = new Buckets(time);
const reader = new HistoryReader(store.history, buckets, store.health, 90, null);
const now = Date.now();
for (const interval of ['1m', '1h', '15m'] as const) {
  const paths = randomRanges(['usd_free', 'gold_ounce'], interval, 300);
  const ts: number[] = [];
  for (const p of paths) {
    const u = new URL('http://x' + p);
    const ref = u.pathname.split('/')[3]!;
    const from = Date.parse(u.searchParams.get('from')!), to = Date.parse(u.searchParams.get('to')!);
    const t = performance.now();
    const r = await reader.rendered(ref, interval, from, to + 1, now);
    ts.push(performance.now() - t);
    if (r.count !== 1000) throw new Error('count ' + r.count + ' ' + p);
  }
  ts.sort((a, b) => a - b);
  console.log(interval, 'rendered p50', ts[150].toFixed(2), 'p90', ts[270].toFixed(2), 'p99', ts[296].toFixed(2));
}
await store.close();
