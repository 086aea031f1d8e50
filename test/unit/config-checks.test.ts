import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, ConfigError } from '../../src/config.js';
import { checkAgainstCatalogue, screeningRules } from '../../src/config-checks.js';
import { checkDerivedPriority, derivedReferences } from '../../src/config-derived.js';
import { parseFormula } from '../../src/domain/formula.js';
import { DEFAULT_SCREENING } from '../../src/domain/screening.js';
import { buildPlans } from '../../src/domain/plan.js';
import { ZoneTime } from '../../src/domain/time.js';
import { parseExpiry } from '../../src/cli/keys.js';
import { testConfig } from '../support/env.js';

const catalogue = loadCatalogue(BUNDLED_CATALOGUE);

describe('checkAgainstCatalogue', () => {
  it('maps source_priority aliases to canonical keys', () => {
    const config = testConfig('/tmp/unused', { sourcePriority: { sekkeh: ['beta', 'alpha'] } });
    assert.deepEqual(checkAgainstCatalogue(config, buildPlans(catalogue.popular), catalogue), { coin_emami: ['beta', 'alpha'] });
  });
  it('rejects a source_priority entry for an unknown reference, naming the field', () => {
    const config = testConfig('/tmp/unused', { sourcePriority: { usd_fre: ['beta'] } });
    assert.throws(() => checkAgainstCatalogue(config, buildPlans(catalogue.popular), catalogue), (error: Error) => error instanceof ConfigError && /source_priority\.usd_fre/.test(error.message));
  });
  it('rejects a plan naming an unknown default reference', () => {
    const plans = buildPlans(catalogue.popular, { board: { default_references: ['usd_free', 'nope'] } });
    assert.throws(() => checkAgainstCatalogue(testConfig('/tmp/unused'), plans, catalogue), /plans\.board\.default_references\[1\]/);
  });
});

describe('screeningRules', () => {
  it('fills each rule from the defaults, then "*", then the reference’s own entries (key or alias)', () => {
    const config = testConfig('/tmp/unused', { screening: { '*': { outlier_mads: 4 }, usd_free: { max_jump_percent: 10 }, sekkeh: { max_jump_percent: 5, confirm_seconds: 30 } } });
    const rules = screeningRules(config, catalogue);
    assert.equal(Object.keys(rules).length, catalogue.size);
    assert.deepEqual(rules.usd_free, { outlierMads: 4, outlierMinPercent: 2, maxJumpPercent: 10, confirmMs: 60_000 });
    assert.deepEqual(rules.coin_emami, { outlierMads: 4, outlierMinPercent: 2, maxJumpPercent: 5, confirmMs: 30_000 });
    assert.deepEqual(rules.gold_18k, { ...DEFAULT_SCREENING, outlierMads: 4 });
    assert.deepEqual(screeningRules(testConfig('/tmp/unused'), catalogue), {});
  });
  it('rejects an entry for an unknown reference, naming the field', () => {
    const config = testConfig('/tmp/unused', { screening: { usd_fre: { max_jump_percent: 10 } } });
    assert.throws(() => screeningRules(config, catalogue), (error: Error) => error instanceof ConfigError && error.message === 'config: screening.usd_fre: unknown reference "usd_fre"');
  });
});

describe('parseExpiry', () => {
  const time = new ZoneTime('Asia/Tehran');
  const now = Date.parse('2026-11-21T10:00:00Z');
  it('reads spans, dates in the configured zone and date-times', () => {
    assert.equal(parseExpiry('90m', time, now), now + 90 * 60_000);
    assert.equal(parseExpiry('2027-01-31', time, now), Date.parse('2027-01-30T20:30:00Z'));
    assert.equal(parseExpiry('2027-01-31T12:00:00Z', time, now), Date.parse('2027-01-31T12:00:00Z'));
    assert.equal(parseExpiry('2027-01-31T12:00:00', time, now), Date.parse('2027-01-31T08:30:00Z'));
    // In Persian or Arabic-Indic digits, as a date may be typed on a Persian keyboard.
    assert.equal(parseExpiry('۲۰۲۷-۰۱-۳۱', time, now), Date.parse('2027-01-30T20:30:00Z'));
    assert.equal(parseExpiry('٩٠m', time, now), now + 90 * 60_000);
  });
  it('rejects zero spans, impossible dates, past dates and nonsense', () => {
    for (const text of ['0m', '0d', '2027-02-31', '2027-13-01', '2026-01-01', 'tomorrow', '30x', '2027-01-31T25:00:00Z']) {
      assert.throws(() => parseExpiry(text, time, now), /--expires/, text);
    }
  });
});

describe('derivedReferences', () => {
  const derived = (formulas: Record<string, string>) => ({ derived: Object.fromEntries(Object.entries(formulas).map(([name, text]) => [name, parseFormula(text)])) });
  const refuses = (formulas: Record<string, string>, message: string) =>
    assert.throws(
      () => derivedReferences(derived(formulas), catalogue),
      (error: Error) => error instanceof ConfigError && error.message === message,
      message,
    );

  it('maps keys and aliases to canonical keys and orders each after the derived references it reads', () => {
    const list = derivedReferences(derived({ coin_emami: 'tala_18 * 8.133 * 0.9 / 0.75', '18ayar': 'xau * dollar / 31.1034768 * 0.75', eur_free: 'usd_free * 1.08' }), catalogue);
    assert.deepEqual(
      list.map((reference) => [reference.key, [...reference.inputs]]),
      [
        ['gold_18k', [['xau', 'gold_ounce'], ['dollar', 'usd_free']]],
        ['coin_emami', [['tala_18', 'gold_18k']]],
        ['eur_free', [['usd_free', 'usd_free']]],
      ],
    );
    assert.deepEqual(derivedReferences({}, catalogue), []);
  });

  it('refuses an unknown reference, computed or read, naming the formula', () => {
    refuses({ gold_18k: 'gold_ounc * usd_free / 31.1034768 * 0.75' }, 'config: derived.gold_18k: unknown reference "gold_ounc"');
    refuses({ gold_18kk: 'gold_ounce' }, 'config: derived.gold_18kk: unknown reference "gold_18kk"');
  });

  it('refuses a cycle, direct or through other derived references, naming it in full', () => {
    refuses({ gold_18k: 'gold_18k * 1' }, 'config: derived: cycle gold_18k → gold_18k');
    refuses({ usd_free: 'eur_free / 1.08', gold_18k: 'gold_24k * 0.75', gold_24k: 'coin_emami / 8.133', coin_emami: 'tala_18 * 10' }, 'config: derived: cycle gold_18k → gold_24k → coin_emami → gold_18k');
  });

  it('refuses two formulas for one reference (a key and its alias)', () => {
    refuses({ gold_18k: 'gold_24k * 0.75', '18ayar': 'gold_24k * 0.75' }, 'config: derived.18ayar: gold_18k already has a formula (derived.gold_18k)');
  });

  it('refuses "derived" in the priority of a reference without a formula', () => {
    const list = derivedReferences(derived({ gold_18k: 'gold_24k * 0.75' }), catalogue);
    checkDerivedPriority({ gold_18k: ['derived', 'feed'] }, list);
    assert.throws(() => checkDerivedPriority({ gold_24k: ['feed', 'derived'] }, list), /source_priority\.gold_24k\[1\]: "derived" serves only references with a formula in derived, and gold_24k has none/);
  });
});
