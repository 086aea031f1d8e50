import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressRefusal } from '../../src/sources/address-rule.js';
import { describeFetchFailure } from '../../src/sources/fetch-failure.js';
import { NoUsableValuesError } from '../../src/sources/parse.js';
import { DocumentTooLargeError } from '../../src/sources/read-document.js';
import { publicReasons } from '../../src/web/public-reasons.js';

const failed = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: { code } });

describe('publicReasons', () => {
  // Each reason a source read gives, as its reader words it, and the kind the public page shows.
  const cases: [string, string][] = [
    ['request timed out after 5 s', 'request timed out'],
    [describeFetchFailure(failed('UND_ERR_CONNECT_TIMEOUT')), 'request timed out'],
    [new DocumentTooLargeError(16 * 1024 * 1024, 'response').message, 'response too large'],
    [new DocumentTooLargeError(1000, 'file').message, 'file too large'],
    ['redirect refused (HTTP 302, "follow_redirects" is off)', 'redirect refused'],
    ['too many redirects (more than 5)', 'bad redirect'],
    ['HTTP 302 without a Location', 'bad redirect'],
    [addressRefusal('http://rates.example.test/', false)!, 'insecure address refused'],
    [`redirect refused: ${addressRefusal('ftp://rates.example.test/', false)}`, 'insecure address refused'],
    [describeFetchFailure(failed('ECONNREFUSED')), 'connection refused'],
    [describeFetchFailure(failed('ECONNRESET')), 'connection closed by the source'],
    [describeFetchFailure(failed('UND_ERR_SOCKET')), 'connection closed by the source'],
    [describeFetchFailure(failed('ENOTFOUND')), 'DNS lookup failed'],
    [describeFetchFailure(failed('DEPTH_ZERO_SELF_SIGNED_CERT')), 'TLS error'],
    [describeFetchFailure(failed('ERR_SSL_WRONG_VERSION_NUMBER')), 'TLS error'],
    [describeFetchFailure(failed('EHOSTUNREACH')), 'source unreachable'],
    [describeFetchFailure(failed('ESOMETHING')), 'source unreachable'],
    ['HTTP 503', 'source answered HTTP 503'],
    ['HTTP 404', 'source answered HTTP 404'],
    ['not a regular file (a FIFO, socket or device is never read)', 'not a regular file'],
    ['file read timed out after 5 s', 'file read timed out'],
    ['file read stuck for more than 5 s, waiting for it to end (a hung mount?)', 'file read timed out'],
    ['updated_at is 4 min ahead of the clock (more than 30 s allowed)', 'document dated in the future'],
    [new NoUsableValuesError(3, 2).message, 'no usable values (3 dropped, 2 stamped ahead of the clock)'],
    [new NoUsableValuesError(3).message, 'no usable values (3 dropped)'],
    ['2 values dropped (1 stamped ahead of the clock)', '2 values dropped, 1 stamped ahead of the clock'],
    ['invalid JSON: Parser cannot parse input: unexpected characters', 'invalid document'],
    ['invalid XML: External entities are not supported', 'invalid document'],
    ['parse took longer than 5 s (timeout_seconds)', 'document took too long to parse'],
    ['parse needed more than 192 MB of memory', 'document needed too much memory to parse'],
    ['parse thread failed: worker exited with code: 1', 'internal error parsing the document'],
    ['no parse thread started within 30 s', 'internal error parsing the document'],
  ];
  for (const [error, kind] of cases) {
    it(`"${error}" → "${kind}"`, () => {
      const reasons = publicReasons(error);
      assert.equal(reasons.length, 1);
      assert.equal(reasons[0]!.en, kind);
      assert.ok(reasons[0]!.fa.length > 0, 'reasons[0]!.fa.length > 0');
    });
  }

  it('shows ahead-of-clock counts in Persian digits', () => {
    assert.equal(publicReasons('no usable values (3 dropped, 2 of them stamped ahead of the clock)')[0]!.fa, 'بدون مقدار قابل استفاده (۳ مقدار نامعتبر کنار گذاشته شد، ۲ مورد با زمان آینده)');
  });
});
