// One client process of the stream bench: holds many GET /v1/stream connections
// with plain node:http and records when each `rates` event arrives.
// Driven over IPC by bench/stream.ts:
//   {type:'open', url, headers, count, concurrency} -> {type:'opened', ok, failed, firstError, ms}
//   {type:'report'} -> {type:'report', receipts: {[version]: number[]}, snapshots, closed}
//   {type:'reset'} -> destroys every connection, forgets what it recorded -> {type:'reset'}
//   {type:'close'} -> destroys every connection and exits.
// The parser is deliberately light: it only needs each event's name and id
// (ASCII lines at the start of a frame), so chunks are read as latin1 and split
// on the blank line that ends a frame. An event's version is its id; where the server sets ids of
// its own (nchan: `<time>:<n>`), the `"version":<n>` its data carries.
import { request } from 'node:http';

const RATES = 'event: rates\nid: ';
const SNAPSHOT = 'event: snapshot\n';
const DATA_VERSION = /"version":(\d+)/;

/** version -> receipt times (epoch ms, this host's clock, as the server's snapshot build time is). */
const receipts = new Map();
let requests = [];
let snapshots = 0;
let closed = 0;
/** Bumped by a reset: connections destroyed by it are not counted as closed by the next server. */
let generation = 0;

function record(version, at) {
  let times = receipts.get(version);
  if (!times) receipts.set(version, (times = []));
  times.push(at);
}

function onFrame(frame, at) {
  if (frame.startsWith(RATES)) {
    const id = frame.slice(RATES.length, frame.indexOf('\n', RATES.length));
    record(/^\d+$/.test(id) ? Number(id) : Number(DATA_VERSION.exec(frame)?.[1]), at);
  } else if (frame.startsWith(SNAPSHOT)) snapshots++;
}

function openOne(url, headers) {
  const own = generation;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (error) => {
      if (settled) return;
      settled = true;
      resolve(error);
    };
    const req = request(url, { headers, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        return settle(`HTTP ${response.statusCode}`);
      }
      let buffer = '';
      response.on('data', (chunk) => {
        const at = Date.now();
        buffer += chunk.toString('latin1');
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          onFrame(buffer.slice(0, end), at);
          buffer = buffer.slice(end + 2);
        }
        settle(null);
      });
      response.on('close', () => own === generation && closed++);
    });
    req.on('error', (error) => {
      if (own === generation) closed++;
      settle(error.code ?? error.message);
    });
    req.end();
    requests.push(req);
  });
}

async function open({ url, headers, count, concurrency }) {
  const started = Date.now();
  let ok = 0;
  let failed = 0;
  let firstError = null;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const error = await openOne(url, headers);
      if (error === null) ok++;
      else {
        failed++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  process.send({ type: 'opened', ok, failed, firstError, ms: Date.now() - started });
}

process.on('message', (message) => {
  if (message.type === 'open') void open(message);
  else if (message.type === 'report') process.send({ type: 'report', receipts: Object.fromEntries(receipts), snapshots, closed });
  else if (message.type === 'reset') {
    for (const req of requests) req.destroy();
    requests = [];
    generation++;
    receipts.clear();
    snapshots = closed = 0;
    process.send({ type: 'reset' });
  } else if (message.type === 'close') {
    for (const req of requests) req.destroy();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready' });
