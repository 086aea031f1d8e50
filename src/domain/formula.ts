import Big from 'big.js';
import jsep from 'jsep';

/**
 * Formulas of derived references (`gold_ounce * usd_free / 31.1034768 * 0.75`):
 * parsed by jsep, limited to + - * /, parentheses, decimal constants and
 * reference names, and evaluated in exact decimal arithmetic. Every step is
 * kept as an exact fraction of two decimals, so nothing is rounded until the
 * result is, once, half to even, to the reference's own digits.
 */

export class FormulaError extends Error {}

/** The source a derived reference's computed value is served under (docs/configuration.md#derived-references). */
export const DERIVED_SOURCE = 'derived';

/** A derived reference checked against the catalogue: its formula, and each name in it to the canonical key it reads. */
export interface DerivedReference {
  /** The canonical key of the reference computed. */
  readonly key: string;
  readonly formula: Formula;
  /** Each name of the formula, as written → the canonical key of the reference it reads. */
  readonly inputs: ReadonlyMap<string, string>;
}

type Operator = '+' | '-' | '*' | '/';
const OPERATORS = new Set<string>(['+', '-', '*', '/']);

export type FormulaNode =
  | { readonly kind: 'constant'; readonly value: Big }
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'negate'; readonly of: FormulaNode }
  | { readonly kind: 'binary'; readonly operator: Operator; readonly left: FormulaNode; readonly right: FormulaNode };

export interface Formula {
  /** As written in the config. */
  readonly text: string;
  readonly root: FormulaNode;
  /** Every reference name it reads, as written, each once, in order of appearance. */
  readonly names: readonly string[];
}

/** A constant as people write one: digits, optionally a point and more digits (no exponent, no bare `.5`). */
const CONSTANT = /^\d+(\.\d+)?$/;
const MAX_LENGTH = 1000;
const ALLOWED = 'only + - * /, parentheses, decimal constants and reference names are allowed';

export function parseFormula(text: string): Formula {
  if (text.length > MAX_LENGTH) throw new FormulaError(`longer than ${MAX_LENGTH} characters`);
  let tree: jsep.Expression;
  try {
    tree = jsep(text);
  } catch (error) {
    throw new FormulaError((error as Error).message.replace(/^Error: /, ''));
  }
  const names: string[] = [];
  const root = convert(tree, names);
  refuseConstantZeroDivisors(root);
  return { text, root, names };
}

/**
 * A divisor that reads no reference and is zero (`/ 0`, `/ (2 - 2)`) would
 * leave the formula without a value forever: refused when the formula is
 * read, as any other mistake in it. Inner divisions are checked first, so a
 * constant divisor can be evaluated safely.
 */
function refuseConstantZeroDivisors(node: FormulaNode): void {
  if (node.kind === 'negate') return refuseConstantZeroDivisors(node.of);
  if (node.kind !== 'binary') return;
  refuseConstantZeroDivisors(node.left);
  refuseConstantZeroDivisors(node.right);
  if (node.operator !== '/' || readsAName(node.right)) return;
  if (exact(node.right, () => '0').n.eq(0)) throw new FormulaError(node.right.kind === 'constant' ? 'divides by zero' : `divides by zero: ${written(node.right)} is 0`);
}

function readsAName(node: FormulaNode): boolean {
  if (node.kind === 'name') return true;
  if (node.kind === 'negate') return readsAName(node.of);
  return node.kind === 'binary' && (readsAName(node.left) || readsAName(node.right));
}

/** A constant part of a formula, written back for an error message. */
function written(node: FormulaNode): string {
  switch (node.kind) {
    case 'constant':
      return node.value.toFixed();
    case 'name':
      return node.name;
    case 'negate':
      return `-${written(node.of)}`;
    case 'binary':
      return `(${written(node.left)} ${node.operator} ${written(node.right)})`;
  }
}

function convert(node: jsep.Expression, names: string[]): FormulaNode {
  switch (node.type) {
    case 'Literal': {
      const raw = String((node as jsep.Literal).raw);
      if (typeof (node as jsep.Literal).value !== 'number' || !CONSTANT.test(raw)) throw new FormulaError(`${ALLOWED}; ${raw} is not a decimal constant (write it like 31.1034768)`);
      return { kind: 'constant', value: new Big(raw) };
    }
    case 'Identifier': {
      const name = (node as jsep.Identifier).name;
      if (!names.includes(name)) names.push(name);
      return { kind: 'name', name };
    }
    case 'UnaryExpression': {
      const unary = node as jsep.UnaryExpression;
      if (unary.operator !== '-' && unary.operator !== '+') throw new FormulaError(`${ALLOWED}; "${unary.operator}" is not`);
      const of = convert(unary.argument, names);
      return unary.operator === '-' ? { kind: 'negate', of } : of;
    }
    case 'BinaryExpression': {
      const binary = node as jsep.BinaryExpression;
      if (!OPERATORS.has(binary.operator)) throw new FormulaError(`${ALLOWED}; "${binary.operator}" is not`);
      return { kind: 'binary', operator: binary.operator as Operator, left: convert(binary.left, names), right: convert(binary.right, names) };
    }
    case 'Compound':
      if ((node as jsep.Compound).body.length === 0) throw new FormulaError('the formula is empty');
      throw new FormulaError(`${ALLOWED}; an operator is missing between two terms`);
    case 'CallExpression':
      throw new FormulaError(`${ALLOWED}; functions are not`);
    default:
      throw new FormulaError(`${ALLOWED}; a ${describeNode(node.type)} is not`);
  }
}

function describeNode(type: string): string {
  return type === 'MemberExpression' ? 'name with "." or "[…]" (write the reference key)' : type.replace(/Expression$/, '').toLowerCase() || 'construct';
}

/** An exact value: numerator over denominator, both decimals; the denominator never zero. */
interface Fraction {
  n: Big;
  d: Big;
}

const ONE = new Big(1);

/**
 * The formula's value with every name read through `valueOf` (decimal text),
 * rounded half to even to `decimals` places, as plain decimal text without
 * trailing zeros. Throws FormulaError on a division by zero.
 */
export function evaluateFormula(formula: Formula, valueOf: (name: string) => string, decimals: number): string {
  const { n, d } = exact(formula.root, valueOf);
  return roundHalfEven(n, d, decimals).toFixed();
}

function exact(node: FormulaNode, valueOf: (name: string) => string): Fraction {
  switch (node.kind) {
    case 'constant':
      return { n: node.value, d: ONE };
    case 'name':
      return { n: new Big(valueOf(node.name)), d: ONE };
    case 'negate': {
      const of = exact(node.of, valueOf);
      return { n: of.n.neg(), d: of.d };
    }
    case 'binary': {
      const a = exact(node.left, valueOf);
      const b = exact(node.right, valueOf);
      switch (node.operator) {
        case '+':
          return a.d.eq(b.d) ? { n: a.n.plus(b.n), d: a.d } : { n: a.n.times(b.d).plus(b.n.times(a.d)), d: a.d.times(b.d) };
        case '-':
          return a.d.eq(b.d) ? { n: a.n.minus(b.n), d: a.d } : { n: a.n.times(b.d).minus(b.n.times(a.d)), d: a.d.times(b.d) };
        case '*':
          return { n: a.n.times(b.n), d: a.d.times(b.d) };
        case '/':
          if (b.n.eq(0)) throw new FormulaError('division by zero');
          return { n: a.n.times(b.d), d: a.d.times(b.n) };
      }
    }
  }
}

/** Integer division only: quotients truncated toward zero (this constructor's own settings; the global Big is untouched). */
const Whole = Big();
Whole.DP = 0;
Whole.RM = Big.roundDown;

/** n ÷ d to `decimals` places, half to even, exactly: the quotient's remainder decides, never a digit cut off earlier. */
function roundHalfEven(n: Big, d: Big, decimals: number): Big {
  const negative = n.lt(0) !== d.lt(0) && !n.eq(0);
  const scale = new Big(10).pow(decimals);
  const numerator = n.abs().times(scale);
  const denominator = d.abs();
  let quotient = new Whole(numerator).div(denominator);
  const twiceRemainder = numerator.minus(quotient.times(denominator)).times(2);
  const versusHalf = twiceRemainder.cmp(denominator);
  if (versusHalf > 0 || (versusHalf === 0 && !quotient.mod(2).eq(0))) quotient = quotient.plus(1);
  // Shifting the point back is a multiplication, exact (a division here would truncate: Whole divides to 0 places).
  const result = quotient.times(new Big(`1e-${decimals}`));
  return negative ? result.neg() : result;
}
