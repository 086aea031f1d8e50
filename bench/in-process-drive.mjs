// The JavaScript cost of a raw-path endpoint alone, without sockets: preloaded into `nerkh serve`
// (`node --import ./bench/in-process-drive.mjs bin/nerkh.js serve`), it waits until the server
// listens, then calls its request listener directly with a plain GET and a response that writes
// nothing, 7 runs of DRIVE_N calls per target in slices of 5,000 (the first two discarded), and writes the CPU time
// per call (ns) of each run to DRIVE_OUT as JSON; then the process exits. Only endpoints answered on
// the raw path (src/http/pipeline/raw.ts) can be driven so: anything else would reach Fastify with a
// response it cannot use. Compare two builds by running each several times, alternating.
// Env: DRIVE_KEY (a key whose plan has the services), DRIVE_OUT, DRIVE_TARGETS (detail,catalogue,webservice;
// webservice needs the username DRIVE_USER, default `bench`), DRIVE_N (default 50000).
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import { writeFileSync } from 'node:fs';
import { setTimeout } from 'node:timers';

const original = http.createServer;
http.createServer = function (...args) {
  const server = original.apply(this, args);
  server.once('listening', () => setTimeout(() => drive(server).catch((error) => { console.error(error); process.exit(1); }), 1500));
  return server;
};
syncBuiltinESMExports();

const KEY = process.env.DRIVE_KEY;
const N = Number(process.env.DRIVE_N ?? 50_000);
const TARGETS = {
  detail: ['/v1/rates/usd_free,eur_free,coin_emami,gold_18k,gold_ounce,coin_bahar,coin_half,coin_quarter,gold_mithqal,usdt_irr', false],
  catalogue: ['/v1/rates', true],
  webservice: [`/webservice/${process.env.DRIVE_USER ?? 'bench'}`, true],
};

class DiscardingResponse {
  status = 0;
  writeHead(status) {
    this.status = status;
    return this;
  }
  end() {}
}

async function drive(server) {
  const listener = server.listeners('request')[0];
  const out = {};
  for (const name of (process.env.DRIVE_TARGETS ?? 'detail,catalogue').split(',')) {
    const [url, gzip] = TARGETS[name];
    const rawHeaders = ['Host', '127.0.0.1', 'x-api-key', KEY, 'User-Agent', 'drive'];
    if (gzip) rawHeaders.push('Accept-Encoding', 'gzip');
    const response = new DiscardingResponse();
    const once = () => listener({ method: 'GET', url, rawHeaders, headers: {}, socket: { remoteAddress: '127.0.0.1' }, httpVersionMinor: 1, httpVersion: '1.1' }, response);
    once();
    if (response.status !== 200) throw new Error(`${name} answered ${response.status}`);
    const runs = [];
    for (let run = 0; run < 7; run++) {
      const start = process.cpuUsage();
      for (let i = 0; i < N; i += 5_000) {
        for (let j = 0; j < 5_000; j++) once();
        // Let timers and I/O run as they would, and leave the loop idle about half the time: a loop
        // busy throughout is what load shedding refuses the costliest caller for (docs/reliability.md#overload).
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
      const cpu = process.cpuUsage(start);
      runs.push(((cpu.user + cpu.system) * 1000) / N);
    }
    if (response.status !== 200) throw new Error(`${name} answered ${response.status}`);
    out[name] = runs.slice(2);
  }
  writeFileSync(process.env.DRIVE_OUT, JSON.stringify(out));
  process.exit(0);
}
