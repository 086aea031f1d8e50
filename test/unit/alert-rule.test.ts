import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AlertRuleError, AlertWatch, nextEdge, parseAlertList, parseAlertRule, parseAlertRules, ruleHolds, ruleIdentity, type AlertRule } from '../../src/domain/alert-rule.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';

const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
const lookup = (name: string) => catalogue.lookup(name)?.key;
const parse = (text: string) => parseAlertRule(text, lookup);
const rate = (value: string | null, change_percent: string | null = null) => ({ value, change_percent });

/** The error's message for `text`, which must be refused. */
function refusal(text: string): string {
  try {
    parse(text);
  } catch (error) {
    assert.ok(error instanceof AlertRuleError, String(error));
    return error.message;
  }
  assert.fail(`"${text}" was accepted`);
}

describe('alert rules', () => {
  it('parses <key><op><number> and <key>.change_percent<op><number>, every op, aliases to canonical keys', () => {
    assert.deepEqual(parse('usd_free>600000'), { text: 'usd_free>600000', key: 'usd_free', field: 'value', op: '>', threshold: '600000' });
    assert.deepEqual(parse(' gold_18k.change_percent <= -2.5 '), { text: 'gold_18k.change_percent <= -2.5', key: 'gold_18k', field: 'change_percent', op: '<=', threshold: '-2.5' });
    for (const op of ['>', '>=', '<', '<='] as const) assert.equal(parse(`usd_free${op}1`).op, op);
    const alias = catalogue.references.find((reference) => reference.key === 'usd_free')!.aliases[0]!;
    assert.equal(parse(`${alias.toUpperCase()}>=1.50`).key, 'usd_free', 'an alias, any case');
    assert.equal(ruleIdentity(parse(`${alias} >= 1.50`)), 'usd_free>=1.50');
  });

  it('refuses a bad rule with a message naming it', () => {
    assert.match(refusal('usd_free'), /^invalid alert rule "usd_free": no operator/);
    assert.match(refusal('>5'), /">5": no reference key/);
    assert.match(refusal('nope>5'), /"nope>5": unknown reference "nope"/);
    assert.match(refusal('nope.change_percent>5'), /unknown reference "nope"/);
    assert.match(refusal('usd_free>abc'), /"usd_free>abc": "abc" is not a decimal number/);
    assert.match(refusal('usd_free>1e5'), /"1e5" is not a decimal number/, 'no exponent');
    assert.match(refusal('usd_free=>5'), /"usd_free=>5": unknown reference "usd_free="/);
    assert.match(refusal('usd_free>>5'), /">5" is not a decimal number/);
    assert.match(refusal('usd_free><5'), /"<5" is not a decimal number/);
    assert.match(refusal('usd_free>'), /"" is not a decimal number/);
    assert.match(refusal(''), /empty/);
    assert.match(refusal(`usd_free>${'1'.repeat(200)}`), /longer than 120 characters/);
    assert.throws(() => parseAlertRules(Array.from({ length: 21 }, (_, i) => `usd_free>${i}`), lookup), /"usd_free>20": more than 20 rules/);
    assert.throws(() => parseAlertRules(['usd_free>1', ' usd_free > 1'], lookup), /"usd_free > 1": given twice/);
    assert.equal(parseAlertRules(['usd_free>1', 'usd_free<1'], lookup).length, 2);
    assert.deepEqual(parseAlertList('usd_free>1;gold_18k.change_percent<=-2', lookup).map(ruleIdentity), ['usd_free>1', 'gold_18k.change_percent<=-2']);
    assert.throws(() => parseAlertList('usd_free>1;;gold_18k<5', lookup), /invalid alert rule "": empty/);
  });

  it('compares as decimals, exactly: no float rounding, trailing zeros equal, null unknown', () => {
    const above = parse('usd_free>123456789012345678');
    assert.equal(ruleHolds(above, rate('123456789012345679')), true, 'a float would call these equal');
    assert.equal(ruleHolds(above, rate('123456789012345678.000')), false);
    assert.equal(ruleHolds(parse('usd_free>=0.3'), rate('0.30')), true);
    assert.equal(ruleHolds(parse('usd_free<0.3'), rate('0.29999999999999999999')), true);
    assert.equal(ruleHolds(parse('usd_free<=-1'), rate('-1.0')), true);
    assert.equal(ruleHolds(parse('usd_free.change_percent>-0.5'), rate('1', '-0.49')), true);
    assert.equal(ruleHolds(parse('usd_free.change_percent>-0.5'), rate('1', null)), null, 'no change known yet');
    assert.equal(ruleHolds(above, rate(null)), null);
    assert.equal(ruleHolds(above, undefined), null);
  });

  it('fires on becoming true, not again until it was false; unknown readings change nothing', () => {
    assert.deepEqual(nextEdge('armed', true), { state: 'fired', fires: true });
    assert.deepEqual(nextEdge('fired', true), { state: 'fired', fires: false });
    assert.deepEqual(nextEdge('fired', false), { state: 'armed', fires: false });
    assert.deepEqual(nextEdge('fired', null), { state: 'fired', fires: false });
    assert.deepEqual(nextEdge('armed', null), { state: 'armed', fires: false });

    const rules: AlertRule[] = parseAlertRules(['usd_free>100', 'usd_free.change_percent<=-1'], lookup);
    const watch = new AlertWatch(rules);
    const seen = (value: string | null, change: string | null = '0') => watch.evaluate((key) => (key === 'usd_free' ? rate(value, change) : undefined)).map((rule) => rule.text);
    assert.deepEqual(seen('99'), []);
    assert.deepEqual(seen('101'), ['usd_free>100'], 'the crossing');
    assert.deepEqual(seen('150'), [], 'still true: not again');
    assert.deepEqual(seen(null), [], 'no value: nothing');
    assert.deepEqual(seen('151'), [], 'still armed as fired');
    assert.deepEqual(seen('100', '-1'), ['usd_free.change_percent<=-1'], 're-armed the first, fired the second');
    assert.deepEqual(seen('100.01', '-2'), ['usd_free>100']);
    const alreadyTrue = new AlertWatch(parseAlertRules(['usd_free>1'], lookup));
    assert.deepEqual(alreadyTrue.evaluate(() => rate('5')).length, 1, 'true at the first reading: fires once');
    assert.deepEqual(alreadyTrue.evaluate(() => rate('5')).length, 0);
  });
});
