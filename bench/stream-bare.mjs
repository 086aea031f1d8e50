// The bare fan-out the stream bench holds nerkh's against: plain node:http, every stream's socket
// in a Set, and one event written to all of them as the same Buffer in one loop (no groups, no
// checks, no yielding). The response head is nerkh's (no chunked encoding, connection: close), and
// so is the socket setup (no Nagle), so the bytes on the wire match.
// Usage: node bench/stream-bare.mjs <port>
//   GET  /stream         an event stream (after `retry:`, nothing until a publish)
//   POST /publish?id=<n> writes `event: rates`, `id: <n>` and the body as `data:` to every stream
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const RETRY = Buffer.from('retry: 3000\n\n');
const sockets = new Set();

const server = createServer((request, response) => {
  if (request.method === 'POST') {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const id = new URL(request.url, 'http://bare').searchParams.get('id');
      const frame = Buffer.from(`event: rates\nid: ${id}\ndata: ${Buffer.concat(chunks).toString()}\n\n`);
      for (const socket of sockets) socket.write(frame);
      response.end();
    });
    return;
  }
  response.useChunkedEncodingByDefault = false;
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
  response.write(RETRY);
  const socket = response.socket;
  socket.setNoDelay(true);
  socket.on('error', () => {});
  socket.on('close', () => sockets.delete(socket));
  sockets.add(socket);
});
server.listen(port, '127.0.0.1', () => console.log(`bare fan-out listening on ${port}`));
