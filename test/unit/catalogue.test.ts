import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { CatalogueError, loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { CATEGORIES, KEY_PATTERN } from '../../src/domain/reference.js';
import { tempDir } from '../support/env.js';

describe('bundled catalogue', () => {
  let catalogue: Catalogue;
  before(() => {
    catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  });

  it('holds more than 300 references', () => {
    assert.ok(catalogue.size > 300, `only ${catalogue.size} references`);
    assert.equal(catalogue.references.length, catalogue.size);
  });

  it('represents all seven categories', () => {
    assert.equal(CATEGORIES.length, 7);
    for (const category of CATEGORIES) assert.ok(catalogue.inCategory(category).length > 0, `no ${category} reference`);
  });

  it('lists references in category order, gold first', () => {
    const order = catalogue.references.map((r) => CATEGORIES.indexOf(r.category));
    for (let i = 1; i < order.length; i++) assert.ok(order[i - 1]! <= order[i]!, `out of order at ${catalogue.references[i]!.key}`);
    assert.equal(catalogue.references[0]!.category, 'gold');
  });

  it('has lowercase, well-formed, unique keys and aliases', () => {
    const names = new Set<string>();
    for (const reference of catalogue.references) {
      for (const name of [reference.key, ...reference.aliases]) {
        assert.match(name, KEY_PATTERN);
        assert.equal(name, name.toLowerCase());
        assert.ok(!names.has(name), `${name} used twice`);
        names.add(name);
      }
      assert.ok(reference.source_key.trim() !== '');
      assert.ok(reference.unit.trim() !== '');
    }
  });

  it('finds a reference by alias', () => {
    assert.equal(catalogue.lookup('sekkeh')?.key, 'coin_emami');
    assert.equal(catalogue.lookup('sekkeh')?.category, 'coin');
    assert.equal(catalogue.lookup('18ayar')?.key, 'gold_18k');
    assert.equal(catalogue.lookup('18ayar')?.source_key, 'ir_gold_18k_gram');
    assert.equal(catalogue.lookup('coin_emami')?.key, 'coin_emami');
  });

  it('looks names up case-insensitively', () => {
    assert.equal(catalogue.lookup('SEKKEH')?.key, 'coin_emami');
    assert.equal(catalogue.lookup('Gold_18K')?.key, 'gold_18k');
    assert.equal(catalogue.lookup('USD_FREE')?.key, 'usd_free');
  });

  it('finds nothing for an unknown name, and get() takes keys only', () => {
    assert.equal(catalogue.lookup('no_such_reference'), undefined);
    assert.equal(catalogue.get('sekkeh'), undefined);
    assert.equal(catalogue.get('coin_emami')?.key, 'coin_emami');
  });

  it('orders popular keys as popular.json does, then every other key once', () => {
    const listed = JSON.parse(readFileSync(join(BUNDLED_CATALOGUE, 'popular.json'), 'utf8')) as string[];
    assert.deepEqual(catalogue.popular.slice(0, listed.length), listed);
    assert.equal(catalogue.popular[0], 'usd_free');
    assert.equal(catalogue.popular.length, catalogue.size);
    assert.equal(new Set(catalogue.popular).size, catalogue.size);
    for (const reference of catalogue.references) assert.ok(catalogue.popular.includes(reference.key));
  });
});

describe('catalogue validation', () => {
  const dir = tempDir('nerkh-catalogue-');
  let count = 0;
  after(() => dir.cleanup());

  function entry(key: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return { key, title: `عنوان ${key}`, title_en: `Title ${key}`, description: 'd', unit: 'ریال', category: 'currency', source_key: `src_${key}`, aliases: [], status: 'active', ...overrides };
  }

  /** A fresh catalogue folder holding the given files. */
  function folder(files: Record<string, unknown>): string {
    const path = join(dir.path, `c${count++}`);
    mkdirSync(path, { recursive: true });
    for (const [name, content] of Object.entries(files)) writeFileSync(join(path, name), typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  }

  function rejects(path: string, ...parts: (string | RegExp)[]): void {
    assert.throws(
      () => loadCatalogue(path),
      (error: unknown) => {
        assert.ok(error instanceof CatalogueError, `not a CatalogueError: ${String(error)}`);
        for (const part of parts) {
          if (typeof part === 'string') assert.ok(error.message.includes(part), `"${error.message}" lacks "${part}"`);
          else assert.match(error.message, part);
        }
        return true;
      },
    );
  }

  it('loads a valid folder with popular.json', () => {
    const catalogue = loadCatalogue(
      folder({
        'currency.json': [entry('usd', { aliases: ['dollar'] }), entry('eur')],
        'gold.json': [entry('g18', { category: 'gold' })],
        'popular.json': ['eur'],
      }),
    );
    assert.equal(catalogue.size, 3);
    assert.deepEqual(
      catalogue.references.map((r) => r.key),
      ['g18', 'usd', 'eur'],
    );
    assert.deepEqual(catalogue.popular, ['eur', 'g18', 'usd']);
    assert.equal(catalogue.lookup('DOLLAR')?.key, 'usd');
  });

  it('loads a single file', () => {
    const path = join(folder({}), 'one.json');
    writeFileSync(path, JSON.stringify([entry('usd'), entry('eur')]));
    const catalogue = loadCatalogue(path);
    assert.equal(catalogue.size, 2);
    assert.deepEqual(catalogue.popular, ['usd', 'eur']);
  });

  it('reads the optional sanity band, null where absent', () => {
    const catalogue = loadCatalogue(folder({ 'a.json': [entry('usd', { min: 100_000, max: 5_000_000 }), entry('eur', { max: 0.5 }), entry('gbp')] }));
    assert.deepEqual([catalogue.get('usd')?.min, catalogue.get('usd')?.max], [100_000, 5_000_000]);
    assert.deepEqual([catalogue.get('eur')?.min, catalogue.get('eur')?.max], [null, 0.5]);
    assert.deepEqual([catalogue.get('gbp')?.min, catalogue.get('gbp')?.max], [null, null]);
  });

  it('rejects a band bound that is not a positive finite number, naming the field', () => {
    rejects(folder({ 'a.json': [entry('usd', { min: 0 })] }), 'a.json entry 0 (usd)', 'min must be a positive finite number');
    rejects(folder({ 'a.json': [entry('usd', { max: -5 })] }), 'max must be a positive finite number');
    rejects(folder({ 'a.json': [entry('usd', { max: '100' })] }), 'max must be a positive finite number');
    rejects(folder({ 'a.json': '[{"key":"usd","title":"t","title_en":"t","description":"d","unit":"u","category":"currency","source_key":"s","aliases":[],"status":"active","max":1e999}]' }), 'max must be a positive finite number');
  });

  it('rejects a band whose min is not below its max', () => {
    rejects(folder({ 'a.json': [entry('usd', { min: 500, max: 500 })] }), 'a.json entry 0 (usd)', 'min (500) must be below max (500)');
    rejects(folder({ 'a.json': [entry('usd', { min: 600, max: 500 })] }), 'min (600) must be below max (500)');
  });

  it('rejects a duplicate key, naming both files and the key', () => {
    rejects(folder({ 'a.json': [entry('usd')], 'b.json': [entry('eur'), entry('usd')] }), 'b.json entry 1 (usd)', 'key "usd"', 'a.json entry 0');
  });

  it('rejects an alias colliding with a key', () => {
    rejects(folder({ 'a.json': [entry('usd'), entry('eur', { aliases: ['usd'] })] }), 'a.json entry 1 (eur)', 'alias "usd"', 'entry 0 (usd)');
  });

  it('rejects an alias colliding with another alias', () => {
    rejects(folder({ 'a.json': [entry('usd', { aliases: ['money'] }), entry('eur', { aliases: ['euro', 'money'] })] }), 'a.json entry 1 (eur)', 'alias "money"');
  });

  it('rejects an entry whose alias repeats its own key', () => {
    rejects(folder({ 'a.json': [entry('usd', { aliases: ['usd'] })] }), 'a.json entry 0 (usd)', 'alias "usd"');
  });

  it('rejects a missing field, naming it', () => {
    const broken = entry('usd');
    delete broken.unit;
    rejects(folder({ 'currency.json': [entry('eur'), broken] }), 'currency.json entry 1 (usd)', 'missing field "unit"');
  });

  it('rejects an empty string field', () => {
    rejects(folder({ 'currency.json': [entry('usd', { title: '  ' })] }), 'currency.json entry 0 (usd)', '"title"');
  });

  it('rejects a bad category', () => {
    rejects(folder({ 'x.json': [entry('usd', { category: 'metal' })] }), 'x.json entry 0 (usd)', 'category');
  });

  it('rejects an uppercase key', () => {
    rejects(folder({ 'x.json': [entry('USD')] }), 'x.json entry 0 (USD)', 'key "USD"', 'lowercase');
  });

  it('rejects an uppercase or malformed alias', () => {
    rejects(folder({ 'x.json': [entry('usd', { aliases: ['Dollar'] })] }), 'x.json entry 0 (usd)', 'alias "Dollar"');
    rejects(folder({ 'x.json': [entry('usd', { aliases: ['bad alias'] })] }), 'x.json entry 0 (usd)', 'alias "bad alias"');
    rejects(folder({ 'x.json': [entry('usd', { aliases: 'dollar' })] }), 'x.json entry 0 (usd)', 'aliases');
  });

  it('rejects a status other than active', () => {
    rejects(folder({ 'x.json': [entry('usd', { status: 'retired' })] }), 'x.json entry 0 (usd)', 'status');
  });

  it('rejects a file that is not an array, or not JSON', () => {
    rejects(folder({ 'x.json': { key: 'usd' } }), 'x.json', 'array');
    rejects(folder({ 'y.json': '[{"key":' }), 'y.json');
    rejects(folder({ 'z.json': [42] }), 'z.json entry 0', 'not an object');
  });

  it('rejects an empty catalogue', () => {
    rejects(folder({ 'x.json': [] }), 'no references');
  });

  it('rejects popular.json naming an unknown key or a key twice', () => {
    rejects(folder({ 'x.json': [entry('usd')], 'popular.json': ['usd', 'nope'] }), 'popular.json', '"nope"');
    rejects(folder({ 'x.json': [entry('usd')], 'popular.json': ['usd', 'usd'] }), 'popular.json', 'twice');
  });

  it('does not silently drop an alias listed in popular.json', () => {
    const path = folder({ 'x.json': [entry('usd'), entry('eur', { aliases: ['euro'] })], 'popular.json': ['euro'] });
    let popular: readonly string[] | null = null;
    try {
      popular = loadCatalogue(path).popular;
    } catch (error) {
      assert.ok(error instanceof CatalogueError);
      return; // rejecting the alias is also acceptable
    }
    assert.equal(popular[0], 'eur');
  });
});

