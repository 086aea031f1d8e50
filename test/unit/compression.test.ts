import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SplicedGzip } from '../../src/render/compression.js';
import { StampedBody } from '../../src/render/stamped-body.js';

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

  it('deflates the tail once for the body’s life: each second only the head is new', () => {
    // Prices as a catalogue of rates has them: digits that do not repeat.
    let seed = 7;
    const prices = Array.from({ length: 400 }, () => (seed = (seed * 48271) % 2147483647));
    const body = new StampedBody(Buffer.from(`","count":400,"rates":${JSON.stringify(prices)}}`));
    body.at('2026-11-21T14:03:07+03:30');
    const first = body.encoded('gzip')!;
    body.at('2026-11-21T14:03:08+03:30');
    const second = body.encoded('gzip')!;
    // Everything but the head's few bytes and the 8-byte trailer is the same deflated tail.
    let shared = 0;
    while (shared < first.length - 8 && first[first.length - 9 - shared] === second[second.length - 9 - shared]) shared++;
    assert.ok(shared > first.length * 0.8, `only ${shared} of ${first.length} bytes shared`);
    assert.ok(first.length < gzipSync(body.at('2026-11-21T14:03:08+03:30')).length * 1.1, 'about as small as gzip of the whole');
  });

  it('splices into one gzip stream that any decoder reads: zlib and the gzip program', () => {
    const spliced = new SplicedGzip(tail);
    for (const head of ['{"success":true,"status":"ok","generated_at":"2026-11-21T14:03:07+03:30', '', 'x', '{"a":"' + 'ی'.repeat(3000)]) {
      const headBytes = Buffer.from(head);
      const gz = spliced.with(headBytes);
      const whole = Buffer.concat([headBytes, tail]);
      assert.deepEqual(gunzipSync(gz), whole);
      // An independent decoder, which also checks the CRC-32 and length in the trailer.
      assert.deepEqual(execFileSync('gzip', ['-dc'], { input: gz }), whole);
    }
  });

  it('leaves bodies of 1 KB or less uncompressed', () => {
    const small = new StampedBody(Buffer.from('","count":0,"references":[]}'));
    small.at('2026-11-21T14:03:07+03:30');
    assert.equal(small.compressible, false);
    assert.equal(small.encoded('br'), null);
  });
});
