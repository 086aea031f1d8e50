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
import { CatalogueRenderer } from '../src/render/catalogue.js';
import { compress, type Encoding } from '../src/render/compression.js';
import { DetailRenderer } from '../src/render/detail.js';
import { LegacyRenderer } from '../src/render/legacy.js';

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
  ['legacy feed (every reference)', new LegacyRenderer(catalogue).render(snapshot, null, stamp, now).body as Buffer],
  ['detail, 10 keys', new DetailRenderer(catalogue, time).prepare(snapshot, 'usd_free,eur_free,coin_emami,gold_18k,gold_ounce,coin_bahar,coin_half,coin_quarter,gold_mithqal,usdt_irr', null).body.at(stamp)],
];

function median(encoding: Encoding, body: Buffer): { ms: number; bytes: number } {
  for (let i = 0; i < 5; i++) compress(body, encoding);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    bytes = compress(body, encoding).length;
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { ms: times.sort((a, b) => a - b)[RUNS >> 1]!, bytes };
}

console.log(`${'body'.padEnd(32)} ${'bytes'.padStart(8)} ${'gzip ms'.padStart(8)} ${'gzip B'.padStart(8)} ${'br ms'.padStart(8)} ${'br B'.padStart(8)}`);
for (const [name, body] of bodies) {
  const gzip = median('gzip', body);
  const br = median('br', body);
  console.log(`${name.padEnd(32)} ${String(body.length).padStart(8)} ${gzip.ms.toFixed(2).padStart(8)} ${String(gzip.bytes).padStart(8)} ${br.ms.toFixed(2).padStart(8)} ${String(br.bytes).padStart(8)}`);
}
console.log(`median of ${RUNS} runs each; each body is compressed at most once a second per encoding`);
