import { Store } from './src/store/store.js';
import { HistoryReader } from './src/history/reader.js';
import { Buckets } from './src/history/buckets.js';
import { ZoneTime } from './src/domain/time.js';
import { randomRanges } from './bench/history.js';
const dir = '/tmp/h2-r-data';
const store = await Store.open({ databaseUrl: null, dataDir: dir });
const sqlite = (store as unknown as { connection: { sqlite: import('better-sqlite3').Database } }).connection.sqlite;
if (process.argv[2] === 'mmap') { sqlite.pragma('mmap_size = 1073741824'); }
if (process.argv[2] === 'cache') { sqlite.pragma('cache_size = -65536'); }
const time = new ZoneTime('Asia/Tehran');
const buckets = new Buckets(time);
const reader = new HistoryReader(store.history, buckets, store.health, 90, null);
const now = Date.now();
for (const interval of (process.argv[3] ? [process.argv[3]] : ['1m', '1h', '15m']) as ('1m' | '1h' | '15m')[]) {
  const paths = randomRanges(['usd_free', 'gold_ounce'], interval, 400);
  const cpu0 = process.cpuUsage(); const t0 = performance.now();
  for (const p of paths) {
    const u = new URL('http://x' + p);
    const ref = u.pathname.split('/')[3]!;
    const from = Date.parse(u.searchParams.get('from')!), to = Date.parse(u.searchParams.get('to')!);
    const r = await reader.rendered(ref, interval, from, to + 1, now);
    if (r.count !== 1000) throw new Error('count ' + r.count + ' ' + p);
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(process.argv[2] ?? 'base', interval, 'cpu ms/query', ((cpu.user + cpu.system) / 1000 / paths.length).toFixed(2), 'wall', ((performance.now() - t0) / paths.length).toFixed(2));
}
await store.close();
