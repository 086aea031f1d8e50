import { randomRanges, measureRanges } from './bench/history.js';
import { mkdtempSync } from 'node:fs';
const work = mkdtempSync('/tmp/h2-w-');
const key = process.argv[2]!; const port = process.argv[3] ?? '38777';
for (const interval of ['1m', '1h', '15m'] as const) {
  const paths = randomRanges(['usd_free', 'gold_ounce'], interval, 5000);
  await measureRanges(`http://127.0.0.1:${port}`, key, paths, 2, 50, work);
  for (const c of [50, 1]) {
    const r = await measureRanges(`http://127.0.0.1:${port}`, key, paths, 6, c, work);
    console.log(interval, 'c' + c, Math.round(r.rps), 'rps p50', r.p50Ms, 'p99', r.p99Ms, 'non2xx', r.non2xx);
  }
}
