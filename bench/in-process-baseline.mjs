// Baseline (c): the same bare handler as baseline (b), started inside the `nerkh serve`
// process by `node --import`, so it shares that process's heap, timers and the
// type feedback its other work leaves in Node's own http and stream code.
// It tells apart what the detail endpoint costs from what the process it runs in costs.
// Env: NERKH_BENCH_BASELINE_PORT; body and headers are read on the first request from
// NERKH_BENCH_BASELINE_BODY and NERKH_BENCH_BASELINE_HEADERS (written after the server is up).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { isMainThread } from 'node:worker_threads';

// Worker threads (history and range-read pools) inherit `--import`: the baseline listens in the main thread only.
if (isMainThread) {
  const port = Number(process.env.NERKH_BENCH_BASELINE_PORT);
  let body = null;
  let headers = null;
  const server = createServer((_request, response) => {
    if (body === null) {
      body = readFileSync(process.env.NERKH_BENCH_BASELINE_BODY);
      headers = [...JSON.parse(readFileSync(process.env.NERKH_BENCH_BASELINE_HEADERS, 'utf8')), 'content-length', String(body.length)];
    }
    response.writeHead(200, headers);
    response.end(body);
  });
  server.listen(port, '127.0.0.1');
  // Never keeps the process alive on its own: nerkh's own shutdown decides.
  server.unref();
}
