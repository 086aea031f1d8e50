/**
 * The popular shared ranges: the latest 1,000 hourly candles of ten popular
 * references, which every chart of them asks for, against a bare node:http
 * server (bench/history-bare.mjs) writing the very bytes and headers nerkh
 * answered each path with. Alternating rounds at the same connections; the
 * figure is nerkh's throughput over the bare server's in the same round.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { HISTORY_REFERENCES, measureRanges, type RangeMeasurement } from './history.js';
import { freePort, median, ROOT, startChild } from './processes.js';

const HOUR = 3_600_000;
/** What the bare server copies; the rest of a response's headers are per request (date, connection) or its length. */
const SKIPPED = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

export interface PopularFigures {
  paths: number;
  body_bytes: number;
  rounds: { nerkh: RangeMeasurement; bare: RangeMeasurement; ratio: number }[];
  ratio_median: number;
}

/** The latest 1,000 hourly candles of the first ten bench references: `from` 999 hours before the current hour. */
export function popularPaths(now = Date.now()): string[] {
  const from = new Date(Math.floor(now / HOUR) * HOUR - 999 * HOUR).toISOString().replace('.000Z', 'Z');
  return HISTORY_REFERENCES.slice(0, 10).map((reference) => `/v1/rates/${reference}/history?interval=1h&from=${from}`);
}

export async function popularRanges(base: string, key: string, work: string, children: ChildProcess[], rounds: number, seconds: number, connections: number): Promise<PopularFigures> {
  const paths = popularPaths();
  const answers: Record<string, { headers: string[]; body: string }> = {};
  let bodyBytes = 0;
  for (const path of paths) {
    const { status, headers, body } = await get(base + path, key);
    if (status !== 200) throw new Error(`history answered ${status} for ${path}: ${body.subarray(0, 300).toString()}`);
    const kept: string[] = [];
    for (let i = 0; i < headers.length; i += 2) if (!SKIPPED.has(headers[i]!.toLowerCase())) kept.push(headers[i]!, headers[i + 1]!);
    answers[path] = { headers: kept, body: body.toString('base64') };
    bodyBytes += body.length;
  }
  const file = join(work, 'popular.json');
  writeFileSync(file, JSON.stringify(answers));
  const port = await freePort();
  await startChild(children, process.execPath, [join(ROOT, 'bench', 'history-bare.mjs'), String(port), file], {}, /listening/);
  const bare = `http://127.0.0.1:${port}`;
  // Warm both up (JIT, the latest-range cache) before anything is recorded.
  await measureRanges(base, key, paths, 2, connections, work);
  await measureRanges(bare, key, paths, 2, connections, work);
  const results: PopularFigures['rounds'] = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? [base, bare] : [bare, base];
    const [first, second] = [await measureRanges(order[0]!, key, paths, seconds, connections, work), await measureRanges(order[1]!, key, paths, seconds, connections, work)];
    const [mine, theirs] = order[0] === base ? [first, second] : [second, first];
    results.push({ nerkh: mine, bare: theirs, ratio: Number((mine.rps / theirs.rps).toFixed(3)) });
    console.log(`popular history ranges round ${round}: nerkh ${Math.round(mine.rps)} req/s (p99 ${mine.p99Ms.toFixed(2)} ms, non-2xx ${mine.non2xx}), bare ${Math.round(theirs.rps)} req/s: ${(mine.rps / theirs.rps).toFixed(3)}`);
  }
  return { paths: paths.length, body_bytes: Math.round(bodyBytes / paths.length), rounds: results, ratio_median: Number(median(results.map((r) => r.ratio)).toFixed(3)) };
}

/** One GET with the key, its headers as the flat raw list and its body as bytes. */
function get(url: string, key: string): Promise<{ status: number; headers: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers: { 'x-api-key': key }, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.rawHeaders, body: Buffer.concat(chunks) }));
    });
    outgoing.on('error', reject).end();
  });
}
