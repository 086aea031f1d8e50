/* global fetch */
// The stream bench's changing market: rewrites one source file every interval
// with a new dollar rate, then asks the server (/metrics) which snapshot
// carries it and when that snapshot was built. One line of JSON per change on stdout:
//   {"written_at":ms,"version":n,"built_at":ms}  (version/built_at null when not matched)
// Usage: node bench/stream-feeder.mjs <source.json> <metrics url> <interval ms>
// A separate process, so the bench's load generator (which blocks its own
// process) never delays a change.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const [path, metricsUrl, intervalText] = process.argv.slice(2);
const interval = Number(intervalText);
const doc = JSON.parse(readFileSync(path, 'utf8'));
const USD = 'ir_fx_free_usd';
const base = doc.items[USD];
let step = 0;

async function latestSnapshot() {
  const text = await (await fetch(metricsUrl)).text();
  const read = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { version: read('nerkh_snapshot_version'), builtAt: Math.round(read('nerkh_snapshot_built_at_seconds') * 1000) };
}

let lastVersion = -1;
const FIRST_ASK_MS = 500;

async function change() {
  step++;
  // A new value every time, within a fraction of a percent of the level (inside the sanity band).
  doc.items[USD] = base + (step % 2 === 0 ? step : -step);
  doc.updated_at = new Date().toISOString();
  const writtenAt = Date.now();
  writeFileSync(`${path}.tmp`, JSON.stringify(doc));
  renameSync(`${path}.tmp`, path);
  // The file source watches its folder, so the snapshot is built within milliseconds on a quiet
  // machine; ask every 100 ms until a snapshot built after this write shows, for most of the interval.
  // The first question waits until the fan-out is most likely over: a /metrics scrape walks every
  // open handle (prom-client's nodejs_active_handles), which with 10,000 streams holds the server's
  // loop for some 25 ms, and ten a second would be the bench's doing, not the stream's.
  let matched = null;
  await new Promise((r) => setTimeout(r, FIRST_ASK_MS - 100));
  while (matched === null && Date.now() - writtenAt < interval * 0.8) {
    await new Promise((r) => setTimeout(r, 100));
    const snapshot = await latestSnapshot().catch(() => null);
    if (snapshot && snapshot.version > lastVersion && snapshot.builtAt >= writtenAt) matched = snapshot;
  }
  if (matched) lastVersion = matched.version;
  console.log(JSON.stringify({ written_at: writtenAt, version: matched?.version ?? null, built_at: matched?.builtAt ?? null }));
}

const timer = setInterval(() => void change(), interval);
process.on('SIGTERM', () => {
  clearInterval(timer);
  process.exit(0);
});
