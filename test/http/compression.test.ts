import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startHarness, type Harness } from '../support/harness.js';
import { fetchRaw, type RawAnswer } from '../support/raw-http.js';


const decode = (raw: RawAnswer): Buffer => {
  const encoding = raw.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(raw.body);
  if (encoding === 'br') return brotliDecompressSync(raw.body);
  return raw.body;
};

const generatedAt = (body: Buffer) => /"generated_at":"([^"]+)"/.exec(body.toString())?.[1];

describe('compression: gzip and br for bodies over 1 KB, prepared once a second', () => {
  let harness: Harness;
  let base: string;
  let key: string;

  before(async () => {
    harness = await startHarness();
    ({ key } = await harness.keyFor('zip-board', 'pro', { overrides: { refresh_interval_seconds: 0 } }));
    base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => harness.close());

  /** The identity and the encoded answer from the same second, so the bodies must be byte for byte the same. */
  async function pair(path: string, acceptEncoding: string): Promise<[RawAnswer, RawAnswer]> {
    for (let attempt = 0; ; attempt++) {
      const plain = await fetchRaw(base, path, { 'x-api-key': key });
      const encoded = await fetchRaw(base, path, { 'x-api-key': key, 'accept-encoding': acceptEncoding });
      if (generatedAt(plain.body) === generatedAt(decode(encoded)) || attempt === 3) return [plain, encoded];
    }
  }

  const paths = {
    catalogue: '/v1/rates',
    'webservice feed': '/webservice/zip-board',
    'webservice feed in toman': '/webservice/zip-board?unit=toman',
    'detail, 10 keys (raw path)': '/v1/rates/usd_free,eur_free,coin_emami,gold_18k,gold_ounce,coin_bahar,coin_half,coin_quarter,gold_mithqal,usdt_irr',
    'detail with sources (route)': '/v1/rates/usd_free,coin_emami%2Cgold_18k?expand=sources',
  };

  for (const [name, path] of Object.entries(paths)) {
    for (const encoding of ['gzip', 'br'] as const) {
      it(`${name}: ${encoding} decompresses to the identical JSON, with a weak ETag and Vary`, async () => {
        const [plain, encoded] = await pair(path, encoding);
        assert.equal(plain.status, 200, plain.body.toString());
        assert.ok(plain.body.length > 1024, 'plain.body.length > 1024');
        assert.equal(plain.headers['content-encoding'], undefined);
        assert.equal(encoded.headers['content-encoding'], encoding);
        assert.ok(encoded.body.length < plain.body.length / 2, `${encoded.body.length} bytes against ${plain.body.length}`);
        assert.equal(Number(encoded.headers['content-length']), encoded.body.length);
        assert.deepEqual(decode(encoded), plain.body);
        for (const answer of [plain, encoded]) assert.match(String(answer.headers.vary), /Accept-Encoding/);
        assert.equal(encoded.headers.etag, `W/${plain.headers.etag}`);
        const again = await fetchRaw(base, path, { 'x-api-key': key, 'accept-encoding': encoding, 'if-none-match': String(encoded.headers.etag) });
        assert.equal(again.status, 304);
        assert.equal(again.headers.etag, encoded.headers.etag);
      });
    }
  }

  it('says Origin and Accept-Encoding in one Vary on both detail paths', async () => {
    for (const path of [paths['detail, 10 keys (raw path)'], `${paths['detail, 10 keys (raw path)']}?unit=rial`]) {
      const answer = await fetchRaw(base, path, { 'x-api-key': key, 'accept-encoding': 'gzip', origin: 'https://board.example' });
      assert.equal(answer.headers.vary, 'Origin, Accept-Encoding', path);
      assert.equal(answer.headers['access-control-allow-origin'], 'https://board.example');
    }
    const catalogue = await fetchRaw(base, '/v1/rates', { 'x-api-key': key, 'accept-encoding': 'gzip', origin: 'https://board.example' });
    assert.equal(catalogue.headers.vary, 'Origin, Accept-Encoding');
  });

  it('honours the client’s preferences, choosing gzip on a tie', async () => {
    const path = paths.catalogue;
    const encodingFor = async (header: string) => (await fetchRaw(base, path, { 'x-api-key': key, 'accept-encoding': header })).headers['content-encoding'];
    assert.equal(await encodingFor('gzip, deflate, br'), 'gzip');
    assert.equal(await encodingFor('br, gzip'), 'gzip');
    assert.equal(await encodingFor('gzip;q=0.5, br'), 'br');
    assert.equal(await encodingFor('br'), 'br');
    assert.equal(await encodingFor('gzip;q=0'), undefined);
    assert.equal(await encodingFor('deflate'), undefined);
    assert.equal(await encodingFor('identity'), undefined);
  });

  it('leaves a body of 1 KB or less alone, and says nothing varies', async () => {
    const small = await fetchRaw(base, '/v1/rates/usd_free', { 'x-api-key': key, 'accept-encoding': 'gzip, br' });
    assert.equal(small.status, 200);
    assert.ok(small.body.length <= 1024, `${small.body.length} bytes`);
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(small.headers.vary, undefined);
  });

  it('never compresses an error', async () => {
    const error = await fetchRaw(base, '/v1/rates?category=nope', { 'x-api-key': key, 'accept-encoding': 'gzip' });
    assert.equal(error.status, 400);
    assert.equal(error.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(error.body.toString()).error, 'INVALID_PARAMETER');
  });
});
