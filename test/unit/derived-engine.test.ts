/**
 * Derived references in the engine, with real source files and the bundled
 * catalogue: each value computed from what the engine serves for its inputs
 * (after failover and bands), exactly; a source named `derived` last in
 * priority unless `source_priority` names it earlier; as old as its oldest
 * input and stale when any input is; bands apply to it like any source.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import Big from 'big.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { derivedReferences } from '../../src/config-derived.js';
import { parseFormula } from '../../src/domain/formula.js';
import { ZoneTime } from '../../src/domain/time.js';
import { RatesEngine } from '../../src/live/engine.js';
import { describeSources } from '../../src/live/source-report.js';
import { SourceMonitor } from '../../src/sources/monitor.js';
import { fileSources, tempDir, writeSource } from '../support/env.js';

const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
const time = new ZoneTime('Asia/Tehran');
const dir = tempDir('nerkh-derived-');
const engines: RatesEngine[] = [];
afterEach(() => {
  for (const engine of engines.splice(0)) engine.stop();
});

const GOLD_18K = 'gold_ounce * usd_free / 31.1034768 * 0.75';
const OUNCE = 'intl_xau_usd_spot';
const USD = 'ir_fx_free_usd';
const GRAM_18K = 'ir_gold_18k_gram';

function byHand(goldOunce: string, usdFree: string): string {
  const Precise = Big();
  Precise.DP = 40;
  return new Precise(goldOunce).times(usdFree).div('31.1034768').times('0.75').round(0, Big.roundHalfEven).toFixed();
}

type Items = Parameters<typeof writeSource>[1];
let folders = 0;

async function start(items: { a: Items; b?: Items }, formulas: Record<string, string>, sourcePriority: Record<string, string[]> = {}, maxAgeSeconds = 300) {
  const [a, b] = fileSources(join(dir.path, `s${folders++}`), ['a', 'b'], maxAgeSeconds);
  writeSource(a!.path!, items.a);
  writeSource(b!.path!, items.b ?? {});
  const monitor = new SourceMonitor([a!, b!]);
  const derived = derivedReferences({ derived: Object.fromEntries(Object.entries(formulas).map(([name, text]) => [name, parseFormula(text)])) }, catalogue);
  const engine = new RatesEngine(catalogue, monitor, time, sourcePriority, {}, derived);
  engines.push(engine);
  await engine.start();
  const rate = (key: string) => engine.current().rates.get(key)!.rate;
  const sources = (key: string) => describeSources(catalogue.get(key)!, rate(key), engine.current());
  return { engine, rate, sources };
}

describe('derived references in the engine', () => {
  it('computes the value exactly from the served inputs, dated by the oldest, with the inputs listed', async () => {
    const older = new Date(Date.now() - 60_000).toISOString();
    const { engine, rate, sources } = await start({ a: { [OUNCE]: { value: 2650.123456789, updated_at: older }, [USD]: 1023456.789 } }, { '18ayar': GOLD_18K });
    const gold = rate('gold_18k');
    assert.deepEqual([gold.value, gold.status, gold.source], [byHand('2650.123456789', '1023456.789'), 'ok', 'derived']);
    assert.equal(gold.updated_at, rate('gold_ounce').updated_at);
    assert.ok(rate('usd_free').updated_at! > gold.updated_at!, 'rate(\'usd_free\').updated_at! > gold.updated_at!');
    const derived = sources('gold_18k').find((report) => report.name === 'derived')!;
    assert.deepEqual([derived.used, derived.rejected, derived.state], [true, null, 'active']);
    assert.deepEqual(
      derived.inputs!.map((input) => [input.key, input.value, input.currency, input.status, input.source]),
      [
        ['gold_ounce', '2650.123456789', 'USD', 'ok', 'a'],
        ['usd_free', '1023456.789', 'IRR', 'ok', 'a'],
      ],
    );
    // Only a reference with a formula has the derived source; rates stay in catalogue order.
    assert.deepEqual(
      sources('usd_free').map((report) => report.name),
      ['a', 'b'],
    );
    assert.deepEqual([...engine.current().rates.keys()], catalogue.references.map((reference) => reference.key));
  });

  it('is stale when an input is, and as old as it', async () => {
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    const { rate } = await start({ a: { [OUNCE]: 2650.5, [USD]: { value: 1000000, updated_at: old } } }, { gold_18k: GOLD_18K }, {}, 300);
    assert.equal(rate('usd_free').status, 'stale');
    const gold = rate('gold_18k');
    assert.deepEqual([gold.status, gold.source, gold.value, gold.updated_at], ['stale', 'derived', byHand('2650.5', '1000000'), Date.parse(old)]);
  });

  it('reads what failover serves: an input out of its band on one source comes from the next', async () => {
    const { rate, sources } = await start({ a: { [OUNCE]: 2650.5, [USD]: 5 }, b: { [USD]: 1000001 } }, { gold_18k: GOLD_18K });
    assert.deepEqual([rate('usd_free').source, rate('usd_free').value], ['b', '1000001']);
    assert.equal(rate('gold_18k').value, byHand('2650.5', '1000001'));
    assert.deepEqual(
      sources('gold_18k')
        .find((report) => report.name === 'derived')!
        .inputs!.map((input) => [input.key, input.source]),
      [
        ['gold_ounce', 'a'],
        ['usd_free', 'b'],
      ],
    );
  });

  it('comes last in priority unless source_priority names it earlier', async () => {
    const items = { a: { [OUNCE]: 2650.5, [USD]: 1000000, [GRAM_18K]: 64000000 } };
    const last = await start(items, { gold_18k: GOLD_18K });
    assert.deepEqual([last.rate('gold_18k').source, last.rate('gold_18k').value], ['a', '64000000']);
    assert.deepEqual(
      last.sources('gold_18k').map((report) => [report.name, report.used]),
      [
        ['a', true],
        ['b', false],
        ['derived', false],
      ],
    );
    const first = await start(items, { gold_18k: GOLD_18K }, { gold_18k: ['derived'] });
    assert.deepEqual([first.rate('gold_18k').source, first.rate('gold_18k').value], ['derived', byHand('2650.5', '1000000')]);
  });

  it('chains: a derived reference may read another, resolved first', async () => {
    const { rate } = await start({ a: { [OUNCE]: 2650.5, [USD]: 1000000 } }, { coin_emami: 'gold_18k / 0.75 * 0.9 * 8.133', gold_18k: GOLD_18K });
    const gram = rate('gold_18k').value!;
    assert.equal(rate('coin_emami').value, new Big(gram).div('0.75').times('0.9').times('8.133').round(0, Big.roundHalfEven).toFixed());
    assert.equal(rate('coin_emami').source, 'derived');
  });

  it('never serves a derived value outside the band, nor one that cannot be computed', async () => {
    const { rate, sources } = await start({ a: { [OUNCE]: 2650.5, [USD]: 1000000 } }, { gold_18k: 'gold_ounce * 1', gold_24k: 'usd_free / (gold_ounce - gold_ounce)' });
    assert.equal(rate('gold_18k').status, 'unavailable');
    assert.deepEqual(
      sources('gold_18k')
        .filter((report) => report.name === 'derived')
        .map((report) => [report.value, report.rejected]),
      // Whole rials, half to even: 2650.5 is 2650.
      [['2650', 'out_of_range']],
    );
    assert.equal(rate('gold_24k').status, 'unavailable');
  });
});
