import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, PACKAGE_ROOT } from '../../src/config.js';
import { DemoFeeder, roundLike } from '../../src/demo/feeder.js';
import { fileSources, tempDir } from '../support/env.js';

const LEVELS = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
const FIXED = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'data', 'demo', 'fixed.json'), 'utf8')) as string[];

/** A repeatable stand-in for Math.random. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('demo feeder', () => {
  const dir = tempDir('nerkh-demo-feeder-');
  let catalogue: Catalogue;
  before(() => {
    catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  });
  after(() => dir.cleanup());

  /** Every source's items after `ticks` writes, one minute of demo time apart. */
  function run(ticks: number): Record<string, number>[] {
    const sources = fileSources(join(dir.path, `run${ticks}`), ['alpha', 'beta', 'gamma']);
    const feeder = new DemoFeeder(sources, seeded(7), () => {}, catalogue);
    const start = Date.parse('2026-11-21T10:00:00Z');
    for (let tick = 0; tick < ticks; tick++) feeder.writeAll(start + tick * 60_000);
    return sources.map((source) => (JSON.parse(readFileSync(source.path!, 'utf8')) as { items: Record<string, number> }).items);
  }

  /** Source keys of the Iranian fuel prices, which are set by decree. */
  const fuel = () => ['gasoline_quota_ir', 'gasoline_free_ir', 'diesel_ir'].map((key) => catalogue.get(key)!.source_key);

  it('lists fixed prices that exist: Iranian fuel at its decreed price', () => {
    assert.deepEqual([...FIXED].sort(), [...fuel()].sort());
    assert.deepEqual(
      fuel().map((key) => LEVELS[key]),
      [15_000, 30_000, 3_000],
    );
  });

  it('writes fixed prices unchanged by every source, however long it runs', () => {
    const documents = run(200);
    for (const key of fuel()) {
      for (const items of documents) {
        if (key in items) assert.equal(items[key], LEVELS[key], key);
      }
    }
    // Everything else does move.
    const moved = Object.keys(LEVELS).filter((key) => !FIXED.includes(key) && documents[0]![key] !== LEVELS[key]);
    assert.ok(moved.length > Object.keys(LEVELS).length * 0.9, `only ${moved.length} items moved`);
  });

  it('writes rial prices as whole rials, small currencies included, and others with decimals', () => {
    const [items] = run(20);
    const currencyOf = new Map(catalogue.references.map((r) => [r.source_key, r.currency]));
    for (const [key, value] of Object.entries(items!)) {
      if (currencyOf.get(key) === 'IRR') assert.ok(Number.isInteger(value), `${key}: ${value} is not whole rials`);
    }
    for (const key of ['ir_fx_free_pkr', 'ir_fx_free_amd', 'ir_fx_free_kzt']) {
      assert.ok(LEVELS[key]! < 10_000, `${key} is no longer a small currency`);
      assert.ok(Number.isInteger(items![key]), key);
    }
    const decimals = ['intl_crude_brent', 'intl_fx_eurusd', 'crypto_doge_usd'].filter((key) => !Number.isInteger(items![key]));
    assert.equal(decimals.length, 3, 'USD prices lost their decimals');
  });

  it('rounds by currency before size', () => {
    assert.equal(roundLike(3905.4321, 3905, 'IRR'), 3905);
    assert.equal(roundLike(1_100_004.9, 1_100_000, 'IRR'), 1_100_000);
    assert.equal(roundLike(65.123456, 65.1, 'USD'), 65.1235);
    assert.equal(roundLike(3905.4321, 3905, 'USD'), 3905.43);
    assert.equal(roundLike(0.16123456, 0.1612, 'USD'), 0.16123);
    assert.equal(roundLike(3905.4321, 3905), 3905.43);
  });
});
