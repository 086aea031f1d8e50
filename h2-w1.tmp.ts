import { randomRanges, measureRanges } from './bench/history.js';
import { mkdtempSync } from 'node:fs';
const work = mkdtempSync('/tmp/h2-w-');
const paths = randomRanges(['usd_free', 'gold_ounce'], (process.argv[4] ?? '1m') as '1m', 5000);
const r = await measureRanges(`http://127.0.0.1:${process.argv[3]}`, process.argv[2]!, paths, 5, Number(process.argv[5] ?? 50), work);
console.log(Math.round(r.rps), 'rps p50', r.p50Ms, 'p99', r.p99Ms);
