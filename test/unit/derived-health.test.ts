/**
 * The derived source's state, worked out from a snapshot built by the real
 * engine from real source files: active with every input fresh, degraded
 * with an input stale or missing or a formula giving no value, down when no
 * formula gives one; and the same state in `expand=sources`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { derivedReferences } from '../../src/config-derived.js';
import { parseFormula } from '../../src/domain/formula.js';
import { ZoneTime } from '../../src/domain/time.js';
import { assessDerived, derivedHealth } from '../../src/live/derived-health.js';
import { RatesEngine } from '../../src/live/engine.js';
import { describeSources } from '../../src/live/source-report.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { fileSources, tempDir, writeSource } from '../support/env.js';

const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
const time = new ZoneTime('Asia/Tehran');
const dir = tempDir('nerkh-derived-health-');
const engines: RatesEngine[] = [];
afterEach(() => {
  for (const engine of engines.splice(0)) engine.stop();
});
let folders = 0;

/** An engine over one source file with `items` (max age 60 s), and the derived source's assessment of its snapshot. */
async function assess(items: Parameters<typeof writeSource>[1], formulas: Record<string, string>, updatedAt: Date = new Date()) {
  const [source] = fileSources(join(dir.path, `s${folders++}`), ['a'], 60);
  writeSource(source!.path!, items, updatedAt);
  const derived = derivedReferences({ derived: Object.fromEntries(Object.entries(formulas).map(([name, text]) => [name, parseFormula(text)])) }, catalogue);
  const engine = new RatesEngine(catalogue, new SourceMonitor([source!]), time, {}, {}, derived);
  engines.push(engine);
  await engine.start();
  const snapshot = engine.current();
  const expanded = (key: string) => describeSources(catalogue.get(key)!, snapshot.rates.get(key)!.rate, snapshot).find((s) => s.name === 'derived')!.state;
  return { assessment: assessDerived(derived, snapshot.rates), expanded };
}

describe('the derived source on the status page', () => {
  it('is active when every formula gave a value from fresh inputs, dated by the oldest input', async () => {
    const at = new Date(Date.now() - 5000);
    const { assessment, expanded } = await assess({ intl_xau_usd_spot: 2650.75, ir_fx_free_usd: 1_000_100, crypto_usdt_usd: 1 }, { gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75', usdc_usd: 'usdt_usd / 2' }, at);
    assert.deepEqual(assessment, { state: 'active', references: 2, computed: 2, staleInputs: [], missingInputs: [], withoutValue: [], oldest: at.getTime() });
    assert.equal(expanded('gold_18k'), 'active');
    const health = derivedHealth(assessment, at.getTime() + 7000);
    assert.deepEqual([health.name, health.type, health.format, health.state, health.age_seconds, health.error, health.mapped], ['derived', 'derived', 'formula', 'active', 7, null, 2]);
  });

  it('is degraded when an input is stale, naming it', async () => {
    const { assessment, expanded } = await assess({ intl_xau_usd_spot: 2650.75, ir_fx_free_usd: 1_000_100 }, { gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75' }, new Date(Date.now() - 120_000));
    assert.deepEqual([assessment.state, assessment.computed, assessment.staleInputs, assessment.missingInputs], ['degraded', 1, ['gold_ounce', 'usd_free'], []]);
    assert.equal(expanded('gold_18k'), 'degraded');
    assert.equal(derivedHealth(assessment, Date.now()).error, 'stale inputs: gold_ounce, usd_free');
  });

  it('is degraded when one formula lacks an input or divides by zero, naming each formula without a value and why; down when none gives a value', async () => {
    const some = await assess({ crypto_usdt_usd: 1, intl_xau_usd_spot: 2650.75 }, { usdc_usd: 'usdt_usd / 2', gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75', gold_24k: 'gold_ounce / (usdt_usd - usdt_usd)' });
    assert.deepEqual([some.assessment.state, some.assessment.computed, some.assessment.missingInputs], ['degraded', 1, ['usd_free']]);
    assert.deepEqual(some.assessment.withoutValue, [
      { key: 'gold_18k', reason: 'no value for usd_free' },
      { key: 'gold_24k', reason: 'division by zero' },
    ]);
    assert.equal(derivedHealth(some.assessment, Date.now()).error, 'inputs without a value: usd_free; 2 of 3 formulas without a value: gold_18k (no value for usd_free), gold_24k (division by zero)');
    const none = await assess({ crypto_usdt_usd: 1 }, { gold_18k: 'gold_ounce * usd_free / 31.1034768 * 0.75' });
    assert.deepEqual([none.assessment.state, none.assessment.computed, none.assessment.missingInputs, none.assessment.oldest], ['down', 0, ['gold_ounce', 'usd_free'], null]);
    assert.equal(none.expanded('gold_18k'), 'down');
    assert.equal(derivedHealth(none.assessment, Date.now()).age_seconds, null);
    assert.equal(derivedHealth(none.assessment, Date.now()).error, 'inputs without a value: gold_ounce, usd_free; 1 of 1 formula without a value: gold_18k (no value for gold_ounce, usd_free)');
  });

  it('names a formula whose result is not above zero, and an input that is stale beside one that is missing', async () => {
    const old = new Date(Date.now() - 120_000);
    const { assessment } = await assess({ crypto_usdt_usd: 1, intl_xau_usd_spot: 2650.75 }, { usdc_usd: 'usdt_usd - 1', gold_18k: 'gold_ounce * usd_free' }, old);
    assert.deepEqual(assessment.withoutValue, [
      { key: 'usdc_usd', reason: 'result 0 is not above zero; usdt_usd stale' },
      { key: 'gold_18k', reason: 'no value for usd_free; gold_ounce stale' },
    ]);
    assert.equal(assessment.state, 'down');
  });
});
