import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queryNames, queryPairs, queryParams, queryValue } from '../../src/http/pipeline/params.js';

const query = queryParams(
  {
    unit: { type: 'enum', values: ['rial', 'toman'], fallback: 'rial', description: 'the unit' },
    q: { type: 'string', minLength: 1, maxLength: 5, description: 'search' },
    in_plan: { type: 'boolean' },
    days: { type: 'integer', minimum: 1, maximum: 90, default: 30 },
  },
  { at: { type: 'string', description: 'answered apart' } },
);

function refusal(text: string): string {
  try {
    query.parse(text);
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'INVALID_PARAMETER', text);
    return (error as Error).message;
  }
  assert.fail(`${text} was accepted`);
}

describe('query parameters from one spec table', () => {
  it('make the schema the API document shows: each optional, nothing else allowed, defaults documented, fallbacks not', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(query.schema)), {
      type: 'object',
      additionalProperties: false,
      properties: {
        unit: { description: 'the unit', type: 'string', enum: ['rial', 'toman'] },
        q: { type: 'string', minLength: 1, maxLength: 5, description: 'search' },
        in_plan: { type: 'string', enum: ['true', 'false'] },
        days: { type: 'integer', minimum: 1, maximum: 90, default: 30 },
        at: { type: 'string', description: 'answered apart' },
      },
    });
    assert.deepEqual(query.names, ['unit', 'q', 'in_plan', 'days', 'at']);
  });

  it('read values, with fallbacks and defaults for the absent ones; no query at all is one shared object', () => {
    assert.deepEqual(query.parse('unit=toman&q=usd&in_plan=false&days=7'), { unit: 'toman', q: 'usd', in_plan: false, days: 7 });
    assert.deepEqual(query.parse('q=a+b'), { unit: 'rial', q: 'a b', in_plan: undefined, days: 30 });
    for (const empty of [null, '', '&', '&&']) assert.equal(query.parse(empty), query.none, String(empty));
    assert.ok(Object.isFrozen(query.none), 'Object.isFrozen(query.none)');
  });

  it('refuse, naming the parameter, what the spec does not allow', () => {
    assert.equal(refusal('foo=1'), 'Unknown query parameter "foo"; this endpoint takes unit, q, in_plan, days, at.');
    assert.equal(refusal('constructor=1'), 'Unknown query parameter "constructor"; this endpoint takes unit, q, in_plan, days, at.');
    assert.equal(refusal('unit=rial&unit=rial'), 'Query parameter "unit" is given more than once.');
    assert.equal(refusal('unit=Toman'), 'Query parameter "unit" must be one of: rial, toman.');
    assert.equal(refusal('unit='), 'Query parameter "unit" must be one of: rial, toman.');
    assert.equal(refusal('in_plan=yes'), 'Query parameter "in_plan" must be one of: true, false.');
    assert.equal(refusal('q='), 'Query parameter "q" must be 1 to 5 characters long.');
    assert.equal(refusal('q=toolong'), 'Query parameter "q" must be 1 to 5 characters long.');
    for (const days of ['0', '91', 'abc', '1.5', '-1', '', '1e1', '9'.repeat(40)]) assert.equal(refusal(`days=${days}`), 'Query parameter "days" must be a whole number from 1 to 90.', days);
  });

  it('a query names a parameter as URLSearchParams reads it, without decoding a plain one', () => {
    for (const text of ['at=1', 'unit=toman&at=1', 'at', 'at=', 'unit=1&at', '%61t=1', 'a%74=x', 'x=1&at=2&x=3']) assert.equal(queryNames(text, 'at'), true, text);
    for (const text of ['', 'a=1', 'xat=1', 'ata=1', 'x=at', 'unit=at', 'at+=1', '&&', 'a+t=1']) assert.equal(queryNames(text, 'at'), new URLSearchParams(text).has('at'), text);
  });
});

describe('reading a raw query', () => {
  it('gives the pairs URLSearchParams gives, plain or encoded', () => {
    for (const text of ['a=1&b=2', 'a', 'a=', '&&a=1&&', 'a=1=2&b', '=x', 'api_key=nrk_x&item=usd,eur', 'a=1&a=2', '', '&', 'x=y&', '?a=1', 'a=%20b&c+d=e', 'item=usd;x']) {
      assert.deepEqual([...queryPairs(text)], [...new URLSearchParams(text)], text);
      assert.equal(queryValue(text, 'a'), new URLSearchParams(text).get('a') ?? undefined, text);
    }
  });
});

describe('decimal and required parameters', () => {
  const exact = queryParams({
    amount: { type: 'decimal', maximum: '999', fractionDigits: 2, positive: true, required: true, description: 'how many' },
    share: { type: 'decimal', maximum: '100', fractionDigits: 1, default: '7' },
    code: { type: 'string', pattern: /^[A-Z]{3}$/ },
  });
  const refused = (text: string | null) => {
    assert.throws(
      () => exact.parse(text),
      (error: Error & { code?: string }) => error.code === 'INVALID_PARAMETER',
    );
    try {
      exact.parse(text);
    } catch (error) {
      return (error as Error).message;
    }
    return '';
  };

  it('document a decimal as a string with its pattern, required ones as required', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(exact.schema)), {
      type: 'object',
      additionalProperties: false,
      required: ['amount'],
      properties: {
        amount: { type: 'string', pattern: '^\\d{1,3}(?:\\.\\d{1,2})?$', description: 'how many' },
        share: { type: 'string', pattern: '^\\d{1,3}(?:\\.\\d{1,1})?$', default: '7' },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
      },
    });
  });

  it('read a decimal in its normal form, digits kept, defaults filled', () => {
    assert.deepEqual({ ...exact.parse('amount=007.50') }, { amount: '7.5', share: '7', code: undefined });
    assert.deepEqual({ ...exact.parse('amount=999&share=0&code=IRT') }, { amount: '999', share: '0', code: 'IRT' });
  });

  it('refuse a missing required parameter, and every number that is not plain, in range and short enough, naming it', () => {
    assert.equal(refused(null), 'Query parameter "amount" is required.');
    assert.equal(refused('share=1'), 'Query parameter "amount" is required.');
    for (const bad of ['', '-1', '0', '0.00', 'NaN', 'Infinity', '1e2', '+1', '1.', '.5', '1.234', '1000', '999.01', ' 1', '١']) {
      assert.match(refused(`amount=${encodeURIComponent(bad)}`), /^Query parameter "amount" must be a plain decimal number above 0 to 999 with at most 2 decimals\.$/, bad);
    }
    assert.match(refused('amount=1&share=100.1'), /"share" must be a plain decimal number from 0 to 100/);
    assert.match(refused('amount=1&code=irt'), /"code" must match/);
  });
});
