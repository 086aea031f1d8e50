/**
 * `npm run bench:compression`: what compressing each kind of body costs, with
 * the service's own levels (src/render/compression.ts). A body is compressed
 * at most once a second per encoding (its generated_at changes), so these
 * figures are the per-second cost of each body that clients ask compressed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCatalogue } from '../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, PACKAGE_ROOT } from '../src/config.js';
import { NO_DAY_FIELDS, type Rate } from '../src/domain/rate.js';
import { ZoneTime } from '../src/domain/time.js';
import { prepareRate } from '../src/live/prepare.js';
import type { PreparedRate, Snapshot } from '../src/live/snapshot.js';
import { CatalogueRenderer } from '../src/http/endpoints/catalogue/render.js';
import { compress, SplicedGzip, type Encoding } from '../src/render/compression.js';
import { DetailRenderer } from '../src/http/endpoints/detail/render.js';
import { WebserviceRenderer } from '../src/http/endpoints/webservice/render.js';

const RUNS = 40;
const time = new ZoneTime('Asia/Tehran');
const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
const levels = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
const now = time.now();
const rates = new Map<string, PreparedRate>();
for (const reference of catalogue.references) {
  const level = levels[reference.source_key];
  const rate: Rate = {
    key: reference.key,
    title: reference.title,
    value: level === undefined ? null : String(level),
    unit: reference.unit,
    currency: reference.currency,
    per: reference.per,
    source_key: reference.source_key,
    updated_at: level === undefined ? null : now,
    status: level === undefined ? 'unavailable' : 'ok',
    source: level === undefined ? null : 'alpha',
    ...NO_DAY_FIELDS,
  };
  rates.set(reference.key, prepareRate(rate, time));
}
const snapshot: Snapshot = { version: 1, builtAt: now, rates, lastUpdate: now, counts: { ok: rates.size, stale: 0, unavailable: 0 } };
const stamp = time.format(now);
const bodies: [string, Buffer][] = [
  ['catalogue (every reference)', new CatalogueRenderer(catalogue).prepare(null).body.at(stamp)],
  ['webservice feed (every reference)', new WebserviceRenderer(catalogue).render(snapshot, null, stamp, now).body as Buffer],
  ['detail, 10 keys', new DetailRenderer(catalogue, time).prepare(snapshot, 'usd_free,eur_free,coin_emami,gold_18k,gold_ounce,coin_bahar,coin_half,coin_quarter,gold_mithqal,usdt_irr', null).body.at(stamp)],
];

function median(run: () => Buffer): { ms: number; bytes: number } {
  for (let i = 0; i < 5; i++) run();
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    bytes = run().length;
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { ms: times.sort((a, b) => a - b)[RUNS >> 1]!, bytes };
}

const HEAD_LENGTH = '{"success":true,"status":"ok","generated_at":"'.length + stamp.length;
console.log(`${'body'.padEnd(32)} ${'bytes'.padStart(8)} ${'gzip ms'.padStart(8)} ${'gzip B'.padStart(8)} ${'tail ms'.padStart(8)} ${'head ms'.padStart(8)} ${'br ms'.padStart(8)} ${'br B'.padStart(8)}`);
for (const [name, body] of bodies) {
  const whole = (encoding: Encoding) => () => compress(body, encoding);
  const gzip = median(whole('gzip'));
  const br = median(whole('br'));
  // Spliced gzip (what the server sends): the tail once per body, then only the head each second.
  const tail = body.subarray(HEAD_LENGTH);
  const head = body.subarray(0, HEAD_LENGTH);
  const once = median(() => {
    void new SplicedGzip(tail);
    return tail;
  });
  const spliced = new SplicedGzip(tail);
  const perSecond = median(() => spliced.with(head));
  console.log(
    `${name.padEnd(32)} ${String(body.length).padStart(8)} ${gzip.ms.toFixed(2).padStart(8)} ${String(perSecond.bytes).padStart(8)} ${once.ms.toFixed(2).padStart(8)} ${perSecond.ms.toFixed(3).padStart(8)} ${br.ms.toFixed(2).padStart(8)} ${String(br.bytes).padStart(8)}`,
  );
}
console.log(
  `median of ${RUNS} runs each. gzip ms: the whole body; gzip B: the spliced gzip sent; tail ms: its tail, deflated once per body; head ms: what each second adds (head and trailer). A brotli body is compressed at most once a second.`,
);
