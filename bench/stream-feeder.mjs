/* global fetch */
// The stream bench's changing market: rewrites one source file every interval
// with a new dollar rate, then asks the server when it built the snapshot that
// carries it. One line of JSON per change on stdout:
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

async function change() {
  step++;
  // A new value every time, within a fraction of a percent of the level (inside the sanity band).
  doc.items[USD] = base + (step % 2 === 0 ? step : -step);
  doc.updated_at = new Date().toISOString();
  const writtenAt = Date.now();
  writeFileSync(`${path}.tmp`, JSON.stringify(doc));
  renameSync(`${path}.tmp`, path);
  // The file source watches its folder: the snapshot is built within milliseconds; read it well after.
  await new Promise((r) => setTimeout(r, interval / 2));
  const { version, builtAt } = await latestSnapshot().catch(() => ({ version: NaN, builtAt: NaN }));
  // Only a snapshot built after this write carries this change; otherwise the change is left unmatched.
  const matched = Number.isFinite(version) && builtAt >= writtenAt;
  console.log(JSON.stringify({ written_at: writtenAt, version: matched ? version : null, built_at: matched ? builtAt : null }));
}

const timer = setInterval(() => void change(), interval);
process.on('SIGTERM', () => {
  clearInterval(timer);
  process.exit(0);
});
