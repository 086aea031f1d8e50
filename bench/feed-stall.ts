/**
 * `node --import tsx bench/feed-stall.ts`: how long one large or hostile feed
 * holds a real `nerkh serve`'s event loop, and how much memory the process
 * takes for it. For each document below, a server with that one http source
 * (polled every 2 s from a local upstream, which answers the first request
 * with a small good document so the start is quick) is left to settle for
 * SETTLE_MS once ready (a serving process starts its thread pools then),
 * then probed on `/healthz` every 25 ms for WINDOW_SECONDS: the slowest probe's answer (an idle
 * server answers within a few ms), and the longest the event loop was held
 * (bench/lag-probe.mjs preloaded: a 1 ms timer chain), less the time its
 * thread waited for a core, which on a busy machine is part of every figure
 * and which no code in the process can shorten. RSS is read from /proc
 * (idle after the start, and the high-water mark over the window), and the
 * source's last logged failure is shown.
 *
 * With BENCH_BEFORE (a built checkout of an earlier version) that version is
 * measured the same way, each document on both back to back; BENCH_ONLY
 * picks the documents whose name holds its text. Never part of `npm test`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, freePort, memory, ROOT, SERVE_FLAGS, startChild } from './processes.js';

const WINDOW_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const PROBE_EVERY_MS = 25;
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : null;
/** Only the documents whose name holds this text (all when unset). */
const ONLY = process.env.BENCH_ONLY ?? '';
const MiB = 1024 * 1024;
const LAG_PROBE = pathToFileURL(join(ROOT, 'bench', 'lag-probe.mjs')).href;
/** A busy machine may take a while to start a server whose first read is parsed on a new thread. */
const START_LIMIT_MS = 120_000;
const SETTLE_MS = 3000;

interface Case {
  name: string;
  /** The source's config entry, less its name, type and url. */
  source: Record<string, unknown>;
  /** What the upstream answers after the first request, and its content type. */
  body: Buffer;
  type: string;
  /** The small good document of the first request. */
  first: string;
}

/** Parts joined until the text is at least `bytes` long. */
function grow(bytes: number, part: (i: number) => string, separator: string): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const text = part(i);
    parts.push(text);
    size += text.length + separator.length;
  }
  return parts.join(separator);
}

const CURRENCIES = ['USD', 'JPY', 'BGN', 'CZK', 'DKK', 'GBP', 'HUF', 'PLN', 'RON', 'SEK', 'CHF', 'ISK', 'NOK', 'TRY', 'AUD', 'BRL', 'CAD', 'CNY', 'HKD', 'IDR', 'ILS', 'INR', 'KRW', 'MXN', 'MYR', 'NZD', 'PHP', 'SGD', 'THB', 'ZAR'];
const day = (back: number) => new Date(Date.now() - (back + 2) * 86_400_000).toISOString().slice(0, 10);

/** The ECB's history file shape, one day of 30 rates after another, newest first, to `bytes`. */
function ecbDocument(bytes: number): string {
  const days = grow(bytes, (i) => `<Cube time='${day(i)}'>${CURRENCIES.map((c, j) => `<Cube currency='${c}' rate='${(1 + j + i / 1e4).toFixed(4)}'/>`).join('')}</Cube>`, '\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><gesmes:subject>Reference rates</gesmes:subject><Cube>${days}</Cube></gesmes:Envelope>\n`;
}

/** A rate site's JSON: two rates up top, then an array of symbols to `bytes`. */
function mappingDocument(bytes: number): string {
  const data = grow(bytes, (i) => `{"symbol":"S${i}","sell":"${1000 + (i % 997)}.25","buy":"${990 + (i % 997)}.75"}`, ',');
  return `{"rates":{"usd":"1.0823","gbp":"0.8512"},"data":[${data}]}`;
}

function nerkhDocument(bytes: number): string {
  const at = new Date(Date.now() - 60_000).toISOString();
  return `{"updated_at":"${at}","items":{"intl_fx_eurusd":1.0823,${grow(bytes, (i) => `"k${i}":{"value":${1000 + i}.125,"updated_at":"${at}"}`, ',')}}}`;
}

const small = `{"rates":{"usd":"1.0823","gbp":"0.8512"},"data":[{"symbol":"EURUSD","sell":"1.0823"}]}`;
const cases: Case[] = [
  // The floor: what a busy machine alone does to the figures.
  { name: 'baseline: 40-byte document', source: { max_age_seconds: 3600 }, body: Buffer.from(`{"items":{"intl_fx_eurusd":1.0823}}`), type: 'application/json', first: `{"items":{"intl_fx_eurusd":1.0823}}` },
  { name: 'nerkh 15 MiB', source: { max_age_seconds: 3600 }, body: Buffer.from(nerkhDocument(15 * MiB)), type: 'application/json', first: `{"items":{"intl_fx_eurusd":1.0823}}` },
  { name: 'ecb 15.5 MiB', source: { format: 'ecb', max_age_seconds: 5 * 86_400, items: { intl_fx_eurusd: 'USD', intl_fx_usdjpy: 'JPY/USD' } }, body: Buffer.from(ecbDocument(15.5 * MiB)), type: 'text/xml', first: ecbDocument(1) },
  { name: 'mapping 15.5 MiB, $.rates.usd', source: { format: 'mapping', max_age_seconds: 3600, items: { intl_fx_eurusd: '$.rates.usd' } }, body: Buffer.from(mappingDocument(15.5 * MiB)), type: 'application/json', first: small },
  { name: 'mapping 15.5 MiB, $..gbp', source: { format: 'mapping', max_age_seconds: 3600, items: { intl_fx_eurusd: '$.rates.usd', intl_fx_gbpusd: '$..gbp' } }, body: Buffer.from(mappingDocument(15.5 * MiB)), type: 'application/json', first: small },
  // The backtrack doubles with each character: 30 may finish inside the 5 s deadline on a quiet machine, 34 never does.
  ...[30, 34].map((length) => ({
    name: `mapping match(@.symbol, '(a+)+'), ${length} chars`,
    source: { format: 'mapping', max_age_seconds: 3600, timeout_seconds: 5, items: { intl_fx_eurusd: "$.data[?match(@.symbol, '(a+)+')].sell" } },
    body: Buffer.from(`{"data":[{"symbol":"${'a'.repeat(length - 1)}!","sell":"1.0823"}]}`),
    type: 'application/json',
    first: `{"data":[{"symbol":"aaaa","sell":"1.0823"}]}`,
  })),
  {
    name: 'csv 1,000,001 rows',
    source: { format: 'csv', max_age_seconds: 3600 },
    body: Buffer.from(`source_key,value\nintl_fx_eurusd,1.0823\n${Array.from({ length: 1_000_000 }, (_, i) => `k${i},${1000 + (i % 997)}.25`).join('\n')}\n`),
    type: 'text/csv',
    first: 'intl_fx_eurusd,1.0823\n',
  },
];

interface Measured {
  name: string;
  stallMs: number;
  /** The longest the event loop was held, and the same less the time its thread waited for a core. */
  heldMs: number;
  ownMs: number;
  probes: number;
  failedProbes: number;
  idleRss: number;
  peakRss: number;
  polls: number;
  failure: string | null;
}

/** One `/healthz` on a connection of its own (a kept-alive one may be closed under a stalled server); false when it failed. */
function probe(port: number): Promise<boolean> {
  return new Promise((done) => {
    get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
      response.resume();
      response.on('end', () => done(response.statusCode === 200));
    }).on('error', () => done(false));
  });
}

async function measure(bin: string, item: Case): Promise<Measured> {
  let requests = 0;
  const upstream = createServer((_request, response) => {
    requests++;
    response.writeHead(200, { 'content-type': item.type, connection: 'close' });
    response.end(requests === 1 ? item.first : item.body);
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  const work = mkdtempSync(join(tmpdir(), 'nerkh-feed-stall-'));
  const config = join(work, 'nerkh.config.json');
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/feed`;
  writeFileSync(config, JSON.stringify({ sources: [{ name: 'feed', type: 'http', url, poll_seconds: 2, max_backoff_seconds: 2, timeout_seconds: 60, ...item.source }] }));
  const port = await freePort();
  const probePort = await freePort();
  const children: ChildProcess[] = [];
  try {
    const env = { NERKH_CONFIG: config, NERKH_DATA_DIR: join(work, 'data'), NERKH_PORT: String(port), NERKH_HOST: '127.0.0.1', NERKH_LOG_LEVEL: 'warn', NERKH_BENCH_PROBE_PORT: String(probePort) };
    const child = await startChild(children, process.execPath, [...SERVE_FLAGS, '--import', LAG_PROBE, bin, 'serve'], env, /nerkh listening on/, undefined, START_LIMIT_MS);
    let log = '';
    child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    while ((await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0)) !== 200) await new Promise((done) => setTimeout(done, 50));
    await new Promise((done) => setTimeout(done, SETTLE_MS));
    const idleRss = memory(child.pid!).rss;
    let peakRss = idleRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, memory(child.pid!).rss)), 50);
    let stallMs = 0;
    let probes = 0;
    let failedProbes = 0;
    const from = Date.now();
    const until = performance.now() + WINDOW_SECONDS * 1000;
    while (performance.now() < until) {
      const sent = performance.now();
      if (!(await probe(port))) failedProbes++;
      stallMs = Math.max(stallMs, performance.now() - sent);
      probes++;
      await new Promise((done) => setTimeout(done, PROBE_EVERY_MS));
    }
    clearInterval(sampler);
    const samples = (await fetch(`http://127.0.0.1:${probePort}/?from=${from}&to=${Date.now()}`).then((r) => r.json())) as [number, number][];
    const heldMs = Math.max(0, ...samples.map(([lag]) => lag));
    const ownMs = Math.max(0, ...samples.map(([lag, waited]) => lag - waited));
    const failures = [...log.matchAll(/read failed: ([^"]*)"/g)].map((m) => m[1]!);
    return { name: item.name, stallMs, heldMs, ownMs, probes, failedProbes, idleRss, peakRss: Math.max(peakRss, memory(child.pid!).peak), polls: requests - 1, failure: failures.at(-1) ?? null };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    upstream.close();
    rmSync(work, { recursive: true, force: true });
  }
}

function table(version: string, rows: { item: Case; m: Measured }[]): void {
  console.log(`\n${version}: ${WINDOW_SECONDS} s of /healthz every ${PROBE_EVERY_MS} ms per document, the source polled every 2 s`);
  console.log('| document | bytes | slowest /healthz (failed) | loop held, less waiting for a core | polls answered | RSS idle → peak | last failure |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { item, m } of rows) {
    console.log(`| ${m.name} | ${(item.body.length / MiB).toFixed(1)} MiB | ${Math.round(m.stallMs)} ms (${m.failedProbes} of ${m.probes}) | ${Math.round(m.heldMs)} ms, ${Math.round(m.ownMs)} ms | ${m.polls} | ${Math.round(m.idleRss)} → ${Math.round(m.peakRss)} MB | ${m.failure ?? '—'} |`);
  }
}

// Each document is measured on both versions back to back, so both meet the same load on a shared machine.
const versions: [string, string][] = [['this version', BIN], ...(BEFORE ? [[`before (${BEFORE})`, join(BEFORE, 'bin', 'nerkh.js')] as [string, string]] : [])];
const results = versions.map(() => [] as { item: Case; m: Measured }[]);
for (const item of cases.filter((c) => c.name.includes(ONLY))) {
  for (const [i, [, bin]] of versions.entries()) results[i]!.push({ item, m: await measure(bin, item) });
}
versions.forEach(([version], i) => table(version, results[i]!));
