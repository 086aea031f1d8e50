import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { firstProblem } from '../../src/config-errors.js';

describe('firstProblem: union errors in words', () => {
  const Kind = Type.Union([Type.Literal('file'), Type.Literal('http'), Type.Literal(3)]);
  // Objects told apart by `type`, as a config with one shape per source type would be.
  const Source = Type.Union([
    Type.Object({ type: Type.Literal('file'), path: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('http'), url: Type.String({ pattern: '^https://' }) }, { additionalProperties: false }),
  ]);
  const Doc = Type.Object({ kind: Type.Optional(Kind), sources: Type.Optional(Type.Array(Source)), limit: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])) });

  it('a union of literals lists its choices (strings bare, others as JSON)', () => {
    assert.deepEqual(firstProblem(Doc, { kind: 'htp' }), { path: '/kind', message: '"htp" is not one of: file, http, 3' });
    assert.deepEqual(firstProblem(Doc, { kind: 'x'.repeat(100) })?.message, `"${'x'.repeat(59)}… is not one of: file, http, 3`);
  });

  it('a union of objects follows the discriminator: a known tag is judged by its own shape, an unknown one gets the choices', () => {
    assert.deepEqual(firstProblem(Doc, { sources: [{ type: 'file', path: 'a' }, { type: 'http', url: 'ftp://x' }] }), { path: '/sources/1/url', message: "Expected string to match '^https://'" });
    assert.deepEqual(firstProblem(Doc, { sources: [{ type: 'htp', url: 'https://x' }] }), { path: '/sources/0/type', message: '"htp" is not one of: file, http' });
    assert.deepEqual(firstProblem(Doc, { sources: [{ url: 'https://x' }] }), { path: '/sources/0/type', message: 'required, one of: file, http' });
    assert.deepEqual(firstProblem(Doc, { sources: ['x'] }), { path: '/sources/0', message: '"x" is not valid: expected an object whose "type" is one of: file, http' });
  });

  it('any other union says what each side expects', () => {
    assert.deepEqual(firstProblem(Doc, { limit: 0 }), { path: '/limit', message: '0 is not valid: expected integer to be greater or equal to 1, or null' });
  });

  it('other errors pass through, and a fitting value has none', () => {
    assert.deepEqual(firstProblem(Doc, { extra: 1, kind: 'file' }), null, 'additional properties allowed here');
    assert.equal(firstProblem(Doc, { sources: [{ type: 'file', path: '' }] })?.path, '/sources/0/path');
  });
});
