import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { ZoneTime } from '../../src/domain/time.js';
import { CatalogueRenderer } from '../../src/http/endpoints/catalogue/render.js';
import { CompressedOnce } from '../../src/render/compressed-once.js';
import { Store } from '../../src/store/store.js';
import { UsageMeter } from '../../src/usage/meter.js';
import { tempDir } from '../support/env.js';

// A full collection on demand, so what is held can be read from the heap.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MB = 1024 * 1024;

/** The heap, in MB, that `keep()` adds once made. */
function heldBy(keep: () => unknown): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = keep();
  gc();
  const held = (process.memoryUsage().heapUsed - before) / MB;
  assert.ok(kept !== undefined, 'kept !== undefined');
  return held;
}

/** A string of `length` characters made in pieces, as a request's URL or a body is: not a view into a shared literal. */
function freshText(head: string, length: number): string {
  return (head + 'x'.repeat(length - head.length)).split('').join('');
}

/** A JSON body over 1 KB whose head (its first 96 characters) differs with `n`. */
function body(n: number, size = 2048): string {
  return `{"success":true,"status":"ok","generated_at":"${n}","candles":[${'1,'.repeat(size / 2)}1]}`;
}

describe('CompressedOnce', () => {
  it('compresses a body once per coding, ETag and head, and serves the same form after', () => {
    const once = new CompressedOnce();
    const form = once.get('"h1"', body(1), 'gzip')!;
    assert.equal(gunzipSync(form).toString(), body(1));
    assert.equal(once.get('"h1"', body(1), 'gzip'), form);
    assert.notEqual(once.get('"h1"', body(2), 'gzip'), form, 'another second, another form');
    assert.equal(once.get('"h1"', '{"small":true}', 'gzip'), null);
  });

  it('is bounded in bytes, keys and entry included', () => {
    const once = new CompressedOnce({ maxBytes: 64 * 1024, maxForms: 1_000_000 });
    for (let n = 0; n < 2000; n++) once.get(`"h${n}"`, body(n), n % 2 ? 'gzip' : 'br');
    const { forms, bytes } = once.held;
    assert.ok(bytes <= 64 * 1024, `${bytes} bytes`);
    assert.ok(forms > 10 && forms < 200, `${forms} small forms in 64 KB: each counts its key and entry`);
  });

  it('keeps no body alive through the head its key is cut from', () => {
    const held = heldBy(() => {
      const once = new CompressedOnce();
      // 150 KB bodies of one repeated character compress to almost nothing: only a kept body would show.
      for (let n = 0; n < 200; n++) once.get(`"h${n}"`, freshText(`{"generated_at":"${n}",`, 150_000), 'gzip');
      assert.equal(once.held.forms, 200);
      return once;
    });
    assert.ok(held < 2, `200 forms of 150 KB bodies hold ${held.toFixed(1)} MB`);
  });

  it('is bounded in forms', () => {
    const once = new CompressedOnce({ maxBytes: 1024 * 1024 * 1024, maxForms: 50 });
    for (let n = 0; n < 500; n++) once.get(`"h${n}"`, body(n), 'gzip');
    assert.equal(once.held.forms, 50);
  });
});

describe('CatalogueRenderer listings', () => {
  const catalogue = loadCatalogue(BUNDLED_CATALOGUE);

  it('keeps one listing per search as it matches: spacing, case and Arabic letters fold to one', () => {
    const renderer = new CatalogueRenderer(catalogue);
    const dollar = renderer.prepare(null, { q: 'dollar' });
    for (const q of ['  dollar ', 'DOLLAR', 'Dollar']) assert.equal(renderer.prepare(null, { q }), dollar, q);
    assert.equal(renderer.prepare(null, { q: 'طلای ۱۸' }), renderer.prepare(null, { q: 'طلاي 18' }));
    assert.equal(renderer.held.listings, 2);
  });

  it('counts a listing that matches nothing at its key and entry, and keeps at most maxListings', () => {
    const byBytes = new CatalogueRenderer(catalogue, { maxBytes: 256 * 1024, maxListings: 1_000_000 });
    for (let i = 0; i < 5000; i++) byBytes.prepare(null, { q: `no such thing ${i} ${'x'.repeat(80)}` });
    assert.ok(byBytes.held.bytes <= 256 * 1024, `${byBytes.held.bytes} bytes`);
    assert.ok(byBytes.held.listings < 1000, `${byBytes.held.listings} empty listings in 256 KB`);
    const byCount = new CatalogueRenderer(catalogue, { maxBytes: 1024 * 1024 * 1024, maxListings: 100 });
    for (let i = 0; i < 5000; i++) byCount.prepare(null, { q: `no such thing ${i}` });
    assert.equal(byCount.held.listings, 100);
  });
});

describe('UsageMeter pending errors', () => {
  it('keep the first 500 characters of a failing request’s path, not the whole URL they were cut from', async () => {
    const dir = tempDir('nerkh-meter-');
    const store = await Store.open({ databaseUrl: null, dataDir: dir.path });
    try {
      const held = heldBy(() => {
        // Never started, so nothing is flushed: every error waits in memory, as while the store is away.
        const meter = new UsageMeter(store.usage, store.keys, new ZoneTime('Asia/Tehran'), store.health);
        for (let i = 0; i < 2000; i++) meter.record('account', 'key', 'detail', Date.now(), { status: 404, error: 'RATE_NOT_FOUND', path: freshText(`/v1/rates/${i},`, 16_000) });
        return meter;
      });
      assert.ok(held < 8, `2,000 pending errors of 16 KB paths hold ${held.toFixed(1)} MB`);
    } finally {
      await store.close();
      dir.cleanup();
    }
  });
});
