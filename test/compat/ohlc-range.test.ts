/**
 * ohlcSearch's bounds read as navasan's clients send them: a unix-seconds
 * start past the year 9999 (12 digits reach 33658) is in the future and said
 * so, never read back through the zone's calendar as some day in the 1900s.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ohlcRange } from '../../src/compat/navasan-ohlc.js';
import { ApiError } from '../../src/domain/errors.js';
import { ZoneTime } from '../../src/domain/time.js';
import { Buckets } from '../../src/history/ranges/buckets.js';

const buckets = new Buckets(new ZoneTime('Asia/Tehran'));
const NOW = Date.parse('2026-11-28T12:59:03Z');

function refusal(start: string, end: string): string {
  try {
    ohlcRange(start, end, NOW, buckets);
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.code, 'INVALID_PARAMETER');
    return error.message;
  }
  assert.fail(`${start}…${end} was accepted`);
}

describe('ohlcSearch range', () => {
  it('a start in the future is refused as such, however far (unix seconds up to 12 digits)', () => {
    for (const start of ['1800000000', '253402300800', '999999999999']) {
      assert.match(refusal(start, start), /"start" is invalid: it lies in the future/, start);
      assert.match(refusal(start, '1795866000'), /"start" is invalid: it lies in the future/, start);
    }
  });

  it('a start later today is today', () => {
    const range = ohlcRange(String(Math.floor(NOW / 1000) + 3_600), String(Math.floor(NOW / 1000) + 3_600), NOW, buckets);
    assert.equal(range.slots, 1);
  });

  it('an end far in the future is today', () => {
    const range = ohlcRange(String(Math.floor(NOW / 1000) - 86_400), '999999999999', NOW, buckets);
    assert.equal(range.slots, 2);
  });
});
