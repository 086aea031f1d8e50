import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, ConfigError } from '../../src/config.js';
import { checkAgainstCatalogue } from '../../src/config-checks.js';
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

describe('parseExpiry', () => {
  const time = new ZoneTime('Asia/Tehran');
  const now = Date.parse('2026-11-21T10:00:00Z');
  it('reads spans, dates in the configured zone and date-times', () => {
    assert.equal(parseExpiry('90m', time, now), now + 90 * 60_000);
    assert.equal(parseExpiry('2027-01-31', time, now), Date.parse('2027-01-30T20:30:00Z'));
    assert.equal(parseExpiry('2027-01-31T12:00:00Z', time, now), Date.parse('2027-01-31T12:00:00Z'));
    assert.equal(parseExpiry('2027-01-31T12:00:00', time, now), Date.parse('2027-01-31T08:30:00Z'));
  });
  it('rejects zero spans, impossible dates, past dates and nonsense', () => {
    for (const text of ['0m', '0d', '2027-02-31', '2027-13-01', '2026-01-01', 'tomorrow', '30x', '2027-01-31T25:00:00Z']) {
      assert.throws(() => parseExpiry(text, time, now), /--expires/, text);
    }
  });
});
