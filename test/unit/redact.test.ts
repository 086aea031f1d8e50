import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeLoosely, REDACTED, redactKeysInText, redactKeysInUrl } from '../../src/domain/redact.js';

const KEY = 'nrk_4fQx9ZbT2LmN8pRs6VwY1cDe3GhJ5kA7';
const TAIL = KEY.slice(4);
const encodeAll = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

/** No trace of the key: neither as written nor once every escape is undone. */
function assertClean(out: string, input: string): void {
  assert.ok(!out.includes(TAIL) && !decodeLoosely(out).includes(TAIL), `${input} → ${out}`);
}

describe('redactKeysInUrl', () => {
  it('replaces the key in every spelling of ?api_key= the stream accepts, keeping the rest of the address', () => {
    const cases: [string, string][] = [
      [`/v1/stream?api_key=${KEY}`, `/v1/stream?api_key=${REDACTED}`],
      [`/v1/stream?keys=usd_free&api_key=${KEY}&unit=toman`, `/v1/stream?keys=usd_free&api_key=${REDACTED}&unit=toman`],
      [`/v1/stream?api%5Fkey=${KEY}`, `/v1/stream?api%5Fkey=${REDACTED}`],
      [`/v1/stream?api%5fkey=${KEY}`, `/v1/stream?api%5fkey=${REDACTED}`],
      [`/v1/stream?%61%70%69%5F%6B%65%79=${KEY}`, `/v1/stream?%61%70%69%5F%6B%65%79=${REDACTED}`],
      [`/v1/stream?api_key=nrk%5F${TAIL}`, `/v1/stream?api_key=${REDACTED}`],
      [`/v1/stream?api_key=${encodeAll(KEY)}`, `/v1/stream?api_key=${REDACTED}`],
      [`/v1/stream?api_key=+${KEY}+`, `/v1/stream?api_key=${REDACTED}`],
      [`/v1/stream#api_key=${KEY}`, `/v1/stream#api_key=${REDACTED}`],
      [`/v1/stream?api_key=${KEY}&api_key=${KEY}`, `/v1/stream?api_key=${REDACTED}&api_key=${REDACTED}`],
    ];
    for (const [input, expected] of cases) assert.equal(redactKeysInUrl(input), expected, input);
  });

  it('replaces the value of any key-named parameter, key-shaped or not, and any key-shaped value under any name', () => {
    // `key` is where BrsApi's compatibility route takes it.
    for (const name of ['API_KEY', 'Api_Key', 'api-key', 'apikey', 'apiKey', 'x-api-key', 'api+key', 'api%2Dkey', 'key', 'KEY', '%6Bey']) {
      assert.equal(redactKeysInUrl(`/v1/rates/usd?${name}=not-a-key-but-secret`), `/v1/rates/usd?${name}=${REDACTED}`, name);
    }
    assert.equal(redactKeysInUrl(`/v1/rates?q=${KEY}`), `/v1/rates?q=${REDACTED}`);
    assert.equal(redactKeysInUrl('/compat/brsapi/Api/Market/Gold_Currency.php?key=abc123'), `/compat/brsapi/Api/Market/Gold_Currency.php?key=${REDACTED}`);
    assert.equal(redactKeysInUrl('/compat/navasan/latest/?item=usd&api_key=free0123'), `/compat/navasan/latest/?item=usd&api_key=${REDACTED}`);
    assert.equal(redactKeysInUrl('/v1/stream?keys=usd_free&monkey=1'), '/v1/stream?keys=usd_free&monkey=1', 'names that only hold "key" stay');
    assert.equal(redactKeysInUrl(`/v1/rates?${KEY}`), `/v1/rates?${REDACTED}`);
    assert.equal(redactKeysInUrl(`/v1/rates?x=1;api_key=${KEY}`), `/v1/rates?x=1;api_key=${REDACTED}`);
    assert.equal(redactKeysInUrl(`/v1/rates?x=1?api_key=${KEY}`), `/v1/rates?x=1?api_key=${REDACTED}`);
    assertClean(redactKeysInUrl(`/v1/stream?api_key=${KEY}%ZZ`), 'a malformed escape after the key');
    assertClean(redactKeysInUrl(`/v1/stream?api_key=nrk%255F${TAIL}`), 'a doubly encoded key');
  });

  it('replaces a path segment that holds a key, encoded or not', () => {
    assert.equal(redactKeysInUrl(`/v1/rates/${KEY}`), `/v1/rates/${REDACTED}`);
    assert.equal(redactKeysInUrl(`/v1/rates/usd_free,${KEY}?unit=toman`), `/v1/rates/${REDACTED}?unit=toman`);
    assert.equal(redactKeysInUrl(`/v1/rates/%6Erk_${TAIL}`), `/v1/rates/${REDACTED}`);
    assert.equal(redactKeysInUrl(`/${KEY}`), `/${REDACTED}`);
  });

  it('leaves an address without a key exactly as it was', () => {
    for (const url of ['/v1/rates/usd_free,coin_emami', '/v1/rates?category=gold&q=سکه', '/v1/rates/%75sd_free?unit=toman', '/v1/rates/usd_free/history?interval=1h&from=2024-01-01', '/webservice/capital?x=1', '/', '/v1/stream?keys=usd_free']) {
      assert.equal(redactKeysInUrl(url), url);
    }
  });
});

describe('redactKeysInText', () => {
  it('replaces keys and key-named values inside any text, such as a JSON log line', () => {
    const line = JSON.stringify({ level: 50, msg: `Reply was already sent for "/v1/stream?API_KEY=secret&keys=a" and ${KEY}`, err: { message: `GET /v1/rates/nrk%5F${TAIL}` } });
    const out = redactKeysInText(line);
    assertClean(out, line);
    assert.ok(!out.includes('secret'), out);
    assert.ok(out.includes('keys=a'), out);
    assert.doesNotThrow(() => JSON.parse(out), 'still a JSON line');
  });

  it('keeps a JSON escape right before a key, so the line stays valid JSON', () => {
    for (const before of ['\n', '\t', '\r', '\b', '\f', '\u0001', '"', '\\']) {
      const line = JSON.stringify({ level: 50, msg: `upstream said:${before}${KEY} is bad` });
      const out = redactKeysInText(line);
      assertClean(out, line);
      assert.equal((JSON.parse(out) as { msg: string }).msg, `upstream said:${before}${REDACTED} is bad`, out);
    }
  });

  it('returns a line with nothing suspect unchanged (the same string), on a host named api-1 too', () => {
    const line = '{"level":30,"time":1,"hostname":"api-1","reqId":"x","method":"GET","url":"/v1/rates/usd_free","status":200,"ms":0.2,"msg":"request"}\n';
    assert.equal(redactKeysInText(line), line);
  });
});
