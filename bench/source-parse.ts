/**
 * `node --import tsx bench/source-parse.ts [reader-module]`: how long the
 * event loop is held while an http source reads a 15 MiB document, measured
 * with perf_hooks' monitorEventLoopDelay, for two shapes (object items with
 * their own time; bare numbers), with every item kept and with only the
 * catalogue's keys kept (as the server does). `reader-module` is the path of
 * a src/sources/http.ts to measure instead of this one (to compare with an
 * older checkout; its constructor is called with the URL and timeout only).
 * The figures are wall-clock: on a busy machine they include time the
 * process waited for a core.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadCatalogue } from '../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../src/config.js';
import type { SourceData } from '../src/sources/parse.js';

const RUNS = 3;
const SIZE = 15 * 1024 * 1024;

interface Reader {
  readIfChanged(): Promise<SourceData | null>;
}
type ReaderClass = new (url: string, timeoutMs: number, limits?: { wanted?: ReadonlySet<string> }) => Reader;

function documentOf(item: (i: number) => string): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < SIZE; i++) {
    const part = item(i);
    parts.push(part);
    size += part.length + 1;
  }
  return `{"updated_at":"${new Date(Date.now() - 60_000).toISOString()}","items":{${parts.join(',')}}}`;
}

const at = new Date(Date.now() - 60_000).toISOString();
const documents: Record<string, string> = {
  'objects with a time': documentOf((i) => `"key_${i}":{"value":${(123456.789 + i).toFixed(3)},"updated_at":"${at}"}`),
  'bare numbers': documentOf((i) => `"k${i}":${1000 + i * 1.25}`),
};

const modulePath = process.argv[2] ? pathToFileURL(resolve(process.argv[2])).href : '../src/sources/http.js';
const { HttpSourceReader } = (await import(modulePath)) as { HttpSourceReader: ReaderClass };
const wanted = new Set(loadCatalogue(BUNDLED_CATALOGUE).references.map((reference) => reference.source_key));

const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
  res.end(documents[decodeURIComponent(req.url!.slice(1))]);
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

console.log(`reader: ${process.argv[2] ?? 'src/sources/http.ts'}; ${RUNS} reads each of a 15 MiB document`);
for (const shape of Object.keys(documents)) {
  for (const keep of process.argv[2] ? ['all'] : ['all', 'catalogue']) {
    const lags: number[] = [];
    const reads: number[] = [];
    let items = 0;
    for (let run = 0; run < RUNS; run++) {
      const url = `${base}/${encodeURIComponent(shape)}`;
      const reader = keep === 'all' ? new HttpSourceReader(url, 60_000) : new HttpSourceReader(url, 60_000, { wanted });
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const started = performance.now();
      items = (await reader.readIfChanged())?.items.size ?? 0;
      reads.push(performance.now() - started);
      // A stall is recorded when the timer behind it finally fires: give it the chance.
      await new Promise((done) => setTimeout(done, 50));
      delay.disable();
      lags.push(delay.max / 1e6);
    }
    const range = (values: number[]) => `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))} ms`;
    console.log(`${shape.padEnd(20)} keep ${keep.padEnd(9)} ${String(items).padStart(7)} items kept   read ${range(reads).padStart(14)}   longest event-loop stall ${range(lags)}`);
  }
}
server.close();
