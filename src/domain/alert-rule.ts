import { compareDecimal } from './decimal.js';
import type { Rate } from './rate.js';

/**
 * Alert rules: `<key><op><number>` or `<key>.change_percent<op><number>`,
 * the op one of `>`, `>=`, `<`, `<=`. Shared by every place that alerts (the
 * webhooks, the push stream's `?alerts=`): one grammar, one evaluation, one
 * edge rule. Pure: reference names are resolved through a function the
 * caller passes (the catalogue's lookup).
 */

export const ALERT_OPS = ['>=', '<=', '>', '<'] as const;
export type AlertOp = (typeof ALERT_OPS)[number];

/** What a rule compares: the rate's value, or its change from the previous close in percent. */
export type AlertField = 'value' | 'change_percent';

export interface AlertRule {
  /** The rule as written (trimmed): what an alert names it by. */
  readonly text: string;
  /** The reference's canonical key (an alias is resolved). */
  readonly key: string;
  readonly field: AlertField;
  readonly op: AlertOp;
  /** The threshold as decimal text, compared exactly (never as a float). */
  readonly threshold: string;
}

/** A rule that cannot be used; the message names the rule. */
export class AlertRuleError extends Error {
  constructor(
    readonly rule: string,
    reason: string,
  ) {
    super(`invalid alert rule "${rule}": ${reason}`);
  }
}

/** The most rules one stream or one webhook endpoint may hold. */
export const MAX_ALERT_RULES = 20;
const MAX_RULE_LENGTH = 120;
const CHANGE_SUFFIX = '.change_percent';
/** Plain decimal text: an optional minus, digits, optional fraction. No exponent, no float reading. */
const THRESHOLD = /^-?\d{1,30}(?:\.\d{1,20})?$/;

/**
 * One rule. `lookup` turns a key or alias (any case) into its canonical key,
 * or undefined when the catalogue has none (a caller may narrow it, to the
 * references an account may read, by answering undefined for the others).
 */
export function parseAlertRule(input: string, lookup: (name: string) => string | undefined): AlertRule {
  const text = input.trim();
  const shown = text.length > MAX_RULE_LENGTH ? `${text.slice(0, MAX_RULE_LENGTH)}…` : text;
  if (text === '') throw new AlertRuleError(shown, 'empty (expected <key><op><number>, e.g. usd_free>600000)');
  if (text.length > MAX_RULE_LENGTH) throw new AlertRuleError(shown, `longer than ${MAX_RULE_LENGTH} characters`);
  const at = text.search(/[<>]/);
  if (at === -1) throw new AlertRuleError(shown, 'no operator (expected one of >, >=, <, <=)');
  const op: AlertOp = text[at + 1] === '=' ? (`${text[at]}=` as AlertOp) : (text[at] as AlertOp);
  const left = text.slice(0, at).trim();
  const right = text.slice(at + op.length).trim();
  if (left === '') throw new AlertRuleError(shown, 'no reference key before the operator');
  if (!THRESHOLD.test(right)) throw new AlertRuleError(shown, `"${right}" is not a decimal number (digits, an optional minus and fraction)`);
  let field: AlertField = 'value';
  let key = lookup(left);
  if (key === undefined && left.toLowerCase().endsWith(CHANGE_SUFFIX)) {
    field = 'change_percent';
    key = lookup(left.slice(0, -CHANGE_SUFFIX.length));
  }
  if (key === undefined) throw new AlertRuleError(shown, `unknown reference "${field === 'value' ? left : left.slice(0, -CHANGE_SUFFIX.length)}"`);
  return { text, key, field, op, threshold: right };
}

/**
 * Several rules, each parsed as above; at most `max`, and no rule twice (the
 * same text would alert twice for one crossing).
 */
export function parseAlertRules(inputs: readonly string[], lookup: (name: string) => string | undefined, max = MAX_ALERT_RULES): AlertRule[] {
  if (inputs.length > max) throw new AlertRuleError(inputs[max]!.trim(), `more than ${max} rules`);
  const rules: AlertRule[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    const rule = parseAlertRule(input, lookup);
    const identity = ruleIdentity(rule);
    if (seen.has(identity)) throw new AlertRuleError(rule.text, 'given twice');
    seen.add(identity);
    rules.push(rule);
  }
  return rules;
}

/** A `;`-separated list of rules (the stream's `?alerts=`), each parsed as above; an empty entry is refused too. */
export function parseAlertList(text: string, lookup: (name: string) => string | undefined, max = MAX_ALERT_RULES): AlertRule[] {
  return parseAlertRules(text.split(';'), lookup, max);
}

/** The rule in canonical form (`gold_18k.change_percent>=2.5`): the same for an alias or another spacing. */
export function ruleIdentity(rule: AlertRule): string {
  return `${rule.key}${rule.field === 'change_percent' ? CHANGE_SUFFIX : ''}${rule.op}${rule.threshold}`;
}

/** What a rule reads of a rate: decimal text, or null when not known. */
export interface AlertInput {
  readonly value: string | null;
  readonly change_percent: string | null;
}

/** Whether the rule holds for the rate; null when the rate or the field is not known (neither true nor false). */
export function ruleHolds(rule: AlertRule, rate: AlertInput | undefined): boolean | null {
  const reading = rate === undefined ? null : rule.field === 'value' ? rate.value : rate.change_percent;
  if (reading === null) return null;
  const order = compareDecimal(reading, rule.threshold);
  switch (rule.op) {
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
  }
}

/**
 * The edge rule: `armed` until the rule is seen true, which fires once and
 * leaves it `fired`; seen false again, it is `armed` again. A rule true when
 * first evaluated fires (it became true as far as the watcher knows). A
 * reading that is not known (null) changes nothing: a reference briefly
 * without a value neither re-arms nor fires.
 */
export type EdgeState = 'armed' | 'fired';

export interface EdgeStep {
  readonly state: EdgeState;
  /** True when this step is a crossing to report. */
  readonly fires: boolean;
}

const STAY_ARMED: EdgeStep = { state: 'armed', fires: false };
const STAY_FIRED: EdgeStep = { state: 'fired', fires: false };
const FIRE: EdgeStep = { state: 'fired', fires: true };

export function nextEdge(state: EdgeState, holds: boolean | null): EdgeStep {
  if (holds === null) return state === 'armed' ? STAY_ARMED : STAY_FIRED;
  if (holds) return state === 'armed' ? FIRE : STAY_FIRED;
  return STAY_ARMED;
}

/**
 * A set of rules with their edge states, for a watcher that keeps them in
 * memory (a push stream): `evaluate` returns the rules that fired on this
 * reading of the rates.
 */
export class AlertWatch {
  private readonly states: EdgeState[];

  constructor(readonly rules: readonly AlertRule[]) {
    this.states = rules.map(() => 'armed');
  }

  evaluate(rateOf: (key: string) => AlertInput | undefined): readonly AlertRule[] {
    let fired: AlertRule[] | null = null;
    for (let i = 0; i < this.rules.length; i++) {
      const rule = this.rules[i]!;
      const step = nextEdge(this.states[i]!, ruleHolds(rule, rateOf(rule.key)));
      this.states[i] = step.state;
      if (step.fires) (fired ??= []).push(rule);
    }
    return fired ?? NONE;
  }
}

const NONE: readonly AlertRule[] = Object.freeze([]);

/**
 * What an alert says, as JSON members without the braces (a webhook wraps
 * them in its envelope, the stream in its event): the rule as given, the
 * reference, its value and change then (number text as the rate has it, so no
 * digit is lost), and `at`, when that value was set. `format` writes a moment
 * in the configured zone.
 */
export function alertFields(rule: AlertRule, rate: Rate, format: (ms: number) => string): string {
  const at = rate.updated_at === null ? 'null' : JSON.stringify(format(rate.updated_at));
  return `"rule":${JSON.stringify(rule.text)},"key":${JSON.stringify(rate.key)},"value":${rate.value ?? 'null'},"change_percent":${rate.change_percent ?? 'null'},"at":${at}`;
}
