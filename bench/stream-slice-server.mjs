// nerkh's stream hub (src/stream/hub.ts, loaded through tsx) behind a minimal node:http server, with the
// slice budget given on the command line: what bench/stream-slices.ts runs once per budget.
// Streams are opened and written as GET /v1/stream does (no chunked encoding, no Nagle, `retry:`
// first, then the hub writes to the socket itself); a publish is a new snapshot in which one
// rate changed, pushed to the hub's history exactly as the ingest pushes one.
// Usage: node --import tsx bench/stream-slice-server.mjs <port> <ms:<n>|streams:<n>>
//   GET  /stream         a stream of one rate
//   POST /publish?id=<n> the body is the rate's JSON in snapshot <n>
//   GET  /detail         a fixed 1 KB answer: a request the fan-out must let through
//   GET  /counts         the hub's counts (fan-outs, slices) as JSON
import { createServer } from 'node:http';
import { ZoneTime } from '../src/domain/time.ts';
import { RefreshTiers } from '../src/live/refresh-tiers.ts';
import { StreamHub } from '../src/stream/hub.ts';

const port = Number(process.argv[2]);
const [kind, amount] = process.argv[3].split(':');
const slice = kind === 'ms' ? { ms: Number(amount) } : { streams: amount === 'all' ? Infinity : Number(amount) };

const RETRY = Buffer.from('retry: 3000\n\n');
const DETAIL = Buffer.from(JSON.stringify({ rates: [{ key: 'usd_free', pad: 'x'.repeat(1000) }] }));
const SELECTION = { intervalSeconds: 0, keys: ['usd_free'], tag: 'usd_free', unit: 'rial' };

function snapshot(version, json) {
  const prepared = { rate: { key: 'usd_free' }, json, legacy: '', hash: version, toman: () => prepared };
  return { version, builtAt: Date.now(), rates: new Map([['usd_free', prepared]]), lastUpdate: null, counts: { ok: 1, stale: 0, unavailable: 0 } };
}

const history = new RefreshTiers(snapshot(0, '{"key":"usd_free"}'), 60);
// No pings: every slice counted is a change's.
const hub = new StreamHub(history, new ZoneTime('Asia/Tehran'), { slice, pingMs: 3_600_000 });

const server = createServer((request, response) => {
  if (request.method === 'POST') {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const id = Number(new URL(request.url, 'http://slices').searchParams.get('id'));
      history.push(snapshot(id, Buffer.concat(chunks).toString()));
      response.end();
    });
    return;
  }
  if (request.url === '/counts') {
    response.end(JSON.stringify(hub.counts()));
    return;
  }
  if (request.url === '/detail') {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': DETAIL.length });
    response.end(DETAIL);
    return;
  }
  response.useChunkedEncodingByDefault = false;
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
  const socket = response.socket;
  socket.setNoDelay(true);
  response.write(RETRY);
  hub.open(socket, SELECTION, () => {});
});
server.listen(port, '127.0.0.1', () => console.log(`slice server listening on ${port} (${process.argv[3]})`));
