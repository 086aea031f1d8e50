/**
 * Sanity bands end to end inside one process: a catalogue with bands, real
 * source files, the real monitor and engine; then what /v1/status, the status
 * page and /metrics make of it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { ZoneTime } from '../../src/domain/time.js';
import { createMetrics } from '../../src/http/metrics.js';
import { RatesEngine } from '../../src/live/engine.js';
import { RefreshTiers } from '../../src/live/refresh-tiers.js';
import { computeStatus, renderStatus } from '../../src/render/service-status.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { renderStatusPage } from '../../src/web/status-page.js';
import { eventually, fileSources, tempDir, writeSource } from '../support/env.js';

const STORE_UP = { reachable: true, since: Date.now(), error: null };
/** One process recording, with nothing written yet and no stream open. */
const PARTS = { history: { minuteDays: 90, lastWritten: null, recording: true, pending: 0 }, openStreams: 0 };

const dir = tempDir('nerkh-bands-');
after(() => dir.cleanup());

const entry = (key: string, sourceKey: string, min: number, max: number) => ({
  key,
  title: `عنوان ${key}`,
  title_en: key,
  description: 'd',
  unit: 'ریال/سکه',
  currency: 'IRR',
  per: 'coin',
  category: 'coin',
  source_key: sourceKey,
  aliases: [],
  status: 'active',
  min,
  max,
});
const cataloguePath = join(dir.path, 'catalogue.json');
writeFileSync(
  cataloguePath,
  JSON.stringify([entry('coin_emami', 'emami', 10_000_000, 10_000_000_000), entry('coin_half', 'half', 5_000_000, 5_000_000_000), entry('coin_quarter', 'quarter', 2_000_000, 2_000_000_000)]),
);

const time = new ZoneTime('Asia/Tehran');
const engines: RatesEngine[] = [];
afterEach(() => {
  for (const engine of engines.splice(0)) engine.stop();
});

let folders = 0;
async function start(write: (a: string, b: string) => void) {
  const [a, b] = fileSources(join(dir.path, `s${folders++}`), ['a', 'b']);
  write(a!.path!, b!.path!);
  const catalogue = loadCatalogue(cataloguePath);
  // The monitor counts each kept document against the bands, as ingest sets it up.
  const monitor = new SourceMonitor([a!, b!], undefined, { references: catalogue.references });
  const engine = new RatesEngine(catalogue, monitor, time);
  engines.push(engine);
  await engine.start();
  const rate = (key: string) => engine.current().rates.get(key)!.rate;
  const sourceHealth = (name: string) => monitor.health(Date.now()).find((s) => s.name === name)!;
  return { engine, monitor, rate, sourceHealth, paths: { a: a!.path!, b: b!.path! } };
}

describe('sanity bands in resolution', () => {
  it('never serves an absurd value: the next source supplies it, and the source shows how many it held', async () => {
    const { rate, sourceHealth, monitor, engine } = await start((a, b) => {
      writeSource(a, { emami: 0.3, half: 1e300, quarter: 400_000_000 });
      writeSource(b, { emami: 850_000_000, half: 450_000_000, quarter: 230_000_000 });
    });
    assert.deepEqual([rate('coin_emami').source, rate('coin_emami').value, rate('coin_emami').status], ['b', '850000000', 'ok']);
    assert.deepEqual([rate('coin_half').source, rate('coin_half').value], ['b', '450000000']);
    assert.deepEqual([rate('coin_quarter').source, rate('coin_quarter').value], ['a', '400000000']);

    // Two of three values lost is not a broken source: a stays active and says what it lost.
    const a = sourceHealth('a');
    assert.deepEqual([a.state, a.error, a.out_of_range], ['active', '2 values out of range', 2]);
    assert.deepEqual([sourceHealth('b').state, sourceHealth('b').error, sourceHealth('b').out_of_range], ['active', null, 0]);

    const snapshots = new RefreshTiers(engine.current(), 60);
    const status = computeStatus(engine.current(), monitor.health(Date.now()), STORE_UP, null, PARTS);
    const json = JSON.parse(renderStatus(status, time, time.format(Date.now())).body) as { sources: { name: string; state: string; error: string | null }[] };
    const shown = json.sources.find((s) => s.name === 'a')!;
    assert.deepEqual([shown.state, shown.error], ['active', '2 values out of range']);
    assert.ok(!('out_of_range' in json.sources[0]!), '/v1/status keeps its documented fields');

    const page = renderStatusPage(status, time, Date.now());
    assert.ok(page.includes('2 values out of range'), 'the status page names the out-of-range values');
    assert.ok(page.includes('۲ مقدار خارج از محدوده مجاز'), 'in Persian too, with Persian digits');

    const metrics = await createMetrics(time.clock, (now) => monitor.health(now), () => snapshots, { usage: () => ({ pendingRequests: 0, pendingErrors: 0, droppedRequests: 0, droppedErrors: 0 }), storeUp: () => true }).registry.metrics();
    assert.match(metrics, /^nerkh_source_values_out_of_range\{source="a"\} 2$/m);
    assert.match(metrics, /^nerkh_source_values_out_of_range\{source="b"\} 0$/m);
    assert.match(metrics, /^nerkh_source_values_dropped\{source="a"\} 0$/m);
  });

  it('never serves an absurd value as a stale fallback either', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const { rate } = await start((a, b) => {
      writeSource(a, { emami: 0.3 });
      writeSource(b, { emami: 850_000_000 }, hourAgo);
    });
    assert.deepEqual([rate('coin_emami').status, rate('coin_emami').source, rate('coin_emami').value], ['stale', 'b', '850000000']);
    assert.equal(rate('coin_half').status, 'unavailable');
  });

  it('a source whose every value is out of range is degraded, and active again once it is sane', async () => {
    const { rate, sourceHealth, paths, monitor, engine } = await start((a, b) => {
      writeSource(a, { emami: 860_000_000, half: 460_000_000 });
      writeSource(b, { emami: 850_000_000, half: 450_000_000 });
    });
    assert.equal(rate('coin_emami').source, 'a');
    // A feed switched to thousands of toman: every value a thousand times too small.
    writeSource(paths.a, { emami: 86_000, half: 46_000 });
    await eventually(() => sourceHealth('a').state === 'degraded');
    assert.equal(sourceHealth('a').error, 'no usable values (2 out of range)');
    assert.deepEqual([rate('coin_emami').source, rate('coin_emami').value], ['b', '850000000']);
    const status = computeStatus(engine.current(), monitor.health(Date.now()), STORE_UP, null, PARTS);
    assert.equal(status.service.state, 'degraded');
    assert.notEqual(status.service.message, 'all services active');

    writeSource(paths.a, { emami: 870_000_000, half: 470_000_000 });
    await eventually(() => sourceHealth('a').state === 'active');
    assert.equal(sourceHealth('a').error, null);
    assert.deepEqual([rate('coin_emami').source, rate('coin_emami').value], ['a', '870000000']);
  });
});
