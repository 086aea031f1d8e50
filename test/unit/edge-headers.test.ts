import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addVary, edgeHeaders, EXPOSED_HEADERS, setVary } from '../../src/http/edge-headers.js';

describe('edge headers', () => {
  it('start every answer with the request id, and CORS with Vary: Origin when an Origin came', () => {
    assert.deepEqual(edgeHeaders('r1', undefined), ['x-request-id', 'r1']);
    assert.deepEqual(edgeHeaders('r1', 'https://shop.example'), ['x-request-id', 'r1', 'access-control-allow-origin', 'https://shop.example', 'vary', 'Origin', 'access-control-expose-headers', EXPOSED_HEADERS]);
  });

  it('find Vary by name, wherever it sits', () => {
    const plain = [...edgeHeaders('r1', undefined), 'ratelimit', 'x'];
    addVary(plain, 'Accept-Encoding');
    assert.deepEqual(plain.slice(-2), ['vary', 'Accept-Encoding']);
    const cors = [...edgeHeaders('r1', 'https://a.example'), 'ratelimit', 'x'];
    addVary(cors, 'Accept-Encoding');
    assert.equal(cors[cors.indexOf('vary') + 1], 'Origin, Accept-Encoding');
    assert.equal(cors.filter((name) => name === 'vary').length, 1);
    setVary(cors, 'Origin');
    assert.equal(cors[cors.indexOf('vary') + 1], 'Origin');
    setVary(plain, null);
    assert.ok(!plain.includes('vary'), '!plain.includes(\'vary\')');
    assert.deepEqual(plain, ['x-request-id', 'r1', 'ratelimit', 'x']);
  });
});
