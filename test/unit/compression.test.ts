import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { StampedBody } from '../../src/render/detail.js';

describe('StampedBody compression', () => {
  const tail = Buffer.from(`","count":1,"references":[${JSON.stringify({ text: 'نرخ '.repeat(400) })}]}`);

  it('compresses once per stamp: every request in the same second gets the same bytes', () => {
    const body = new StampedBody(tail);
    const plain = body.at('2026-11-21T14:03:07+03:30');
    const first = body.encoded('gzip')!;
    assert.equal(body.encoded('gzip'), first, 'the same buffer, not compressed again');
    body.at('2026-11-21T14:03:07+03:30');
    assert.equal(body.encoded('gzip'), first);
    assert.deepEqual(gunzipSync(first), plain);
    body.at('2026-11-21T14:03:08+03:30');
    const next = body.encoded('gzip')!;
    assert.notEqual(next, first);
    assert.match(gunzipSync(next).toString(), /"generated_at":"2026-11-21T14:03:08\+03:30"/);
  });

  it('leaves bodies of 1 KB or less uncompressed', () => {
    const small = new StampedBody(Buffer.from('","count":0,"references":[]}'));
    small.at('2026-11-21T14:03:07+03:30');
    assert.equal(small.compressible, false);
    assert.equal(small.encoded('br'), null);
  });
});
