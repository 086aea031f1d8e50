import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { CatalogueError, loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, PACKAGE_ROOT } from '../../src/config.js';
import { CATEGORIES, CURRENCY_PATTERN, KEY_PATTERN, PER_UNITS, type Reference } from '../../src/domain/reference.js';
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
      assert.ok(reference.source_key.trim() !== '', 'reference.source_key.trim() !== \'\'');
      assert.ok(reference.unit.trim() !== '', 'reference.unit.trim() !== \'\'');
    }
  });

  it('says what every price is: an ISO currency and a per from the vocabulary', () => {
    for (const reference of catalogue.references) {
      assert.match(reference.currency, CURRENCY_PATTERN, reference.key);
      assert.ok(PER_UNITS.includes(reference.per), `${reference.key}: per "${reference.per}"`);
    }
    const usd = catalogue.get('usd_free')!;
    assert.deepEqual([usd.currency, usd.per, usd.unit], ['IRR', 'unit', 'ریال/دلار']);
    const yen = catalogue.get('jpy_free')!;
    assert.deepEqual([yen.currency, yen.per, yen.unit], ['IRR', '100 units', 'ریال/۱۰۰ ین']);
    assert.deepEqual([catalogue.get('gold_18k')!.per, catalogue.get('gold_18k')!.unit], ['gram', 'ریال/گرم']);
    assert.deepEqual([catalogue.get('gold_mithqal')!.per, catalogue.get('gold_mithqal')!.unit], ['mithqal', 'ریال/مثقال']);
    assert.deepEqual([catalogue.get('coin_emami')!.per, catalogue.get('coin_emami')!.unit], ['coin', 'ریال/سکه']);
    assert.deepEqual([catalogue.get('gold_ounce')!.currency, catalogue.get('gold_ounce')!.unit], ['USD', 'دلار/اونس']);
    assert.deepEqual([catalogue.get('fx_usdjpy')!.currency, catalogue.get('fx_usdjpy')!.per], ['JPY', 'unit']);
    assert.deepEqual([catalogue.get('shib_usd')!.currency, catalogue.get('shib_usd')!.per], ['USD', '1000000 units']);
    assert.deepEqual([catalogue.get('dxy_index')!.currency, catalogue.get('dxy_index')!.per], ['XXX', 'point']);
  });

  it('never lets one unit label stand for two currencies or two kinds of per', () => {
    const meaning = new Map<string, Reference>();
    for (const reference of catalogue.references) {
      const first = meaning.get(reference.unit);
      if (!first) {
        meaning.set(reference.unit, reference);
        continue;
      }
      assert.equal(reference.currency, first.currency, `"${reference.unit}" is ${first.currency} on ${first.key} but ${reference.currency} on ${reference.key}`);
      assert.equal(reference.per, first.per, `"${reference.unit}" is per ${first.per} on ${first.key} but per ${reference.per} on ${reference.key}`);
    }
  });

  it('writes every label as "<currency word>/<what one price buys>", one word per currency and per measure', () => {
    const currencyWord = new Map<string, string>(); // ISO code → the word its labels start with
    const measureWord = new Map<string, string>(); // per (a measure) → the words after the slash
    for (const reference of catalogue.references) {
      if (reference.per === 'point') {
        assert.equal(reference.currency, 'XXX', reference.key);
        continue;
      }
      const [word, bought, ...rest] = reference.unit.split('/');
      assert.ok(word && bought && rest.length === 0, `${reference.key}: "${reference.unit}"`);
      assert.equal(currencyWord.get(reference.currency) ?? word, word, `${reference.key}: ${reference.currency} is written two ways`);
      currencyWord.set(reference.currency, word);
      const count = MULTIPLES[reference.per];
      if (count !== undefined) {
        assert.ok(bought.startsWith(count), `${reference.key}: "${reference.unit}" does not start its per with "${count}"`);
        assert.ok(!/^[۰-۹]/.test(bought.slice(count.length)), `${reference.key}: "${reference.unit}" counts the wrong multiple`);
      } else {
        assert.equal(measureWord.get(reference.per) ?? bought, bought, `${reference.key}: per ${reference.per} is written two ways`);
        measureWord.set(reference.per, bought);
      }
    }
    assert.equal(new Set(currencyWord.values()).size, currencyWord.size, 'two currencies share a word');
    assert.equal(new Set(measureWord.values()).size, measureWord.size, 'two measures share a word');
  });

  it('names what one price buys in both titles when it is a measure or a multiple', () => {
    for (const reference of catalogue.references) {
      const words = TITLE_WORDS[reference.per];
      if (!words) continue;
      assert.ok(words.en.test(reference.title_en), `${reference.key}: "${reference.title_en}" does not say ${reference.per}`);
      assert.ok(words.fa.test(reference.title), `${reference.key}: "${reference.title}" does not say ${reference.per}`);
    }
  });

  it('gives every reference a sanity band at least ten times wider than the demo level on either side', () => {
    const levels = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'data', 'demo', 'levels.json'), 'utf8')) as Record<string, number>;
    for (const reference of catalogue.references) {
      const { key, min, max } = reference;
      assert.ok(min !== null && max !== null, `${key} has no band`);
      assert.ok(min > 0 && min < max, `${key}: band ${min}..${max}`);
      const level = levels[reference.source_key];
      assert.ok(level !== undefined, `${key}: no demo level for ${reference.source_key}`);
      assert.ok(min * 10 <= level && level * 10 <= max, `${key}: level ${level} is too near the band ${min}..${max}`);
    }
    // The documented anchors: a gold coin in rial, gold in USD per ounce.
    assert.deepEqual([catalogue.get('coin_emami')!.min, catalogue.get('coin_emami')!.max], [1e7, 1e12]);
    assert.deepEqual([catalogue.get('gold_ounce')!.min, catalogue.get('gold_ounce')!.max], [100, 100_000]);
  });

  it('finds a reference by alias', () => {
    assert.equal(catalogue.lookup('sekkeh')?.key, 'coin_emami');
    assert.equal(catalogue.lookup('sekkeh')?.category, 'coin');
    assert.equal(catalogue.lookup('18ayar')?.key, 'gold_18k');
    assert.equal(catalogue.lookup('18ayar')?.source_key, 'ir_gold_18k_gram');
    assert.equal(catalogue.lookup('coin_emami')?.key, 'coin_emami');
  });

  it('keeps every renamed key working as an alias of its new key', () => {
    const renamed: Record<string, string> = {
      gold_ounce_rial: 'gold_ounce_irr',
      silver_ounce_rial: 'silver_ounce_irr',
      gold_dubai_24k: 'gold_24k_dubai',
      gold_dubai_22k: 'gold_22k_dubai',
      rebar_ir: 'steel_rebar_ir',
      beam_ir: 'steel_beam_ir',
      hrc_ir: 'steel_hrc_ir',
      billet_ir: 'steel_billet_ir',
      steel_billet: 'steel_billet_black_sea',
      steel_scrap: 'steel_scrap_turkey',
      gasoline_ir_quota: 'gasoline_quota_ir',
      gasoline_ir_free: 'gasoline_free_ir',
      diesel_singapore: 'gasoil_10ppm_singapore',
      propane: 'propane_mont_belvieu',
    };
    for (const [old, key] of Object.entries(renamed)) {
      assert.equal(catalogue.lookup(old)?.key, key, old);
      assert.equal(catalogue.get(old), undefined, `${old} is still a key`);
    }
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
    for (const reference of catalogue.references) assert.ok(catalogue.popular.includes(reference.key), 'catalogue.popular.includes(reference.key)');
  });
});

/** How a label writes the count of a per in multiples (the rest of the label names the currency or token). */
const MULTIPLES: Partial<Record<string, string>> = { unit: '', '10 units': '۱۰ ', '100 units': '۱۰۰ ', '1000 units': '۱۰۰۰ ', '1000000 units': '۱٬۰۰۰٬۰۰۰ ' };

/** How titles name a per that is a measure or a multiple (coins, single units and index points go without saying). */
const TITLE_WORDS: Partial<Record<string, { en: RegExp; fa: RegExp }>> = {
  gram: { en: /\bgram\b/, fa: /گرم/ },
  mithqal: { en: /\bmithqal\b/, fa: /مثقال/ },
  ounce: { en: /\bounce\b/, fa: /انس|اونس/ },
  kilogram: { en: /\bkilogram\b/, fa: /کیلوگرم/ },
  pound: { en: /\bpound\b/, fa: /پوند/ },
  tonne: { en: /\btonne\b/, fa: /(^|[\s(])تن([\s)،]|$)/ },
  barrel: { en: /\bbarrel\b/, fa: /بشکه/ },
  gallon: { en: /\bgallon\b/, fa: /گالن/ },
  litre: { en: /\blitre\b/, fa: /لیتر/ },
  MMBtu: { en: /\bMMBtu\b/, fa: /میلیون بی‌تی‌یو/ },
  MWh: { en: /\bMWh\b/, fa: /مگاوات‌ساعت/ },
  therm: { en: /\bper therm\b/, fa: /هر ترم/ },
  '100 therms': { en: /\bper 100 therms\b/, fa: /هر ۱۰۰ ترم/ },
  '10 units': { en: /\bper 10 [A-Z]/, fa: /هر ۱۰ / },
  '100 units': { en: /\bper 100 [A-Z]/, fa: /هر ۱۰۰ / },
  '1000 units': { en: /\bper 1,000 [A-Z]/, fa: /هر (۱۰۰۰|هزار)/ },
  '1000000 units': { en: /\bper 1,000,000 [A-Z]/, fa: /هر (۱٬۰۰۰٬۰۰۰|یک میلیون)/ },
};

describe('catalogue validation', () => {
  const dir = tempDir('nerkh-catalogue-');
  let count = 0;
  after(() => dir.cleanup());

  function entry(key: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return { key, title: `عنوان ${key}`, title_en: `Title ${key}`, description: 'd', unit: 'ریال/واحد', currency: 'IRR', per: 'unit', category: 'currency', source_key: `src_${key}`, aliases: [], status: 'active', ...overrides };
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
    rejects(folder({ 'a.json': '[{"key":"usd","title":"t","title_en":"t","description":"d","unit":"u","currency":"IRR","per":"unit","category":"currency","source_key":"s","aliases":[],"status":"active","max":1e999}]' }), 'max must be a positive finite number');
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

  it('rejects a currency that is not an ISO 4217 code, and the toman code (rial prices are written in IRR)', () => {
    for (const currency of ['ABC', 'irr', 'IRT', 'RIAL']) {
      rejects(folder({ 'x.json': [entry('usd', { currency })] }), 'x.json entry 0 (usd)', `currency "${currency}"`, 'ISO 4217');
    }
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

  it('rejects a missing or ill-formed currency, naming file and entry', () => {
    const missing = entry('usd');
    delete missing.currency;
    rejects(folder({ 'x.json': [missing] }), 'x.json entry 0 (usd)', 'missing field "currency"');
    for (const bad of ['irr', 'RIAL', 'IR', '', 42, null]) {
      rejects(folder({ 'x.json': [entry('eur'), entry('usd', { currency: bad })] }), 'x.json entry 1 (usd)', 'currency', 'ISO 4217');
    }
  });

  it('rejects a per outside the vocabulary, listing the vocabulary', () => {
    const missing = entry('usd');
    delete missing.per;
    rejects(folder({ 'x.json': [missing] }), 'x.json entry 0 (usd)', 'missing field "per"');
    for (const bad of ['grams', 'Gram', 'bbl', '100 Units', 3]) {
      rejects(folder({ 'x.json': [entry('usd', { per: bad })] }), 'x.json entry 0 (usd)', 'per', '"gram", "mithqal"');
    }
  });

  it('accepts every per of the vocabulary', () => {
    const entries = PER_UNITS.map((per, i) => entry(`k${i}`, { per, unit: `ریال/${per}` }));
    assert.deepEqual(
      loadCatalogue(folder({ 'x.json': entries })).references.map((r) => r.per),
      [...PER_UNITS],
    );
  });

  it('rejects one unit label used with two pers or two currencies, naming both entries', () => {
    rejects(
      folder({ 'a.json': [entry('g18', { unit: 'ریال', per: 'gram' })], 'b.json': [entry('usd', { unit: 'ریال' }), entry('m17', { unit: 'ریال', per: 'mithqal' })] }),
      'b.json entry 0 (usd)',
      'unit "ریال"',
      'a.json entry 0 (g18)',
    );
    rejects(folder({ 'a.json': [entry('usd', { unit: 'دلار' }), entry('btc', { unit: 'دلار', currency: 'USD' })] }), 'a.json entry 1 (btc)', 'IRR per unit');
    // One meaning under one label is fine, however many references use it.
    assert.equal(loadCatalogue(folder({ 'a.json': [entry('usd', { unit: 'ریال' }), entry('eur', { unit: 'ریال' })] })).size, 2);
  });

  it('takes an optional sanity band, null when absent', () => {
    const catalogue = loadCatalogue(
      folder({ 'x.json': [entry('usd', { min: 10_000, max: 1e9 }), entry('eur'), entry('gbp', { min: 0.5 }), entry('aed', { max: 1e8, min: null })] }),
    );
    assert.deepEqual(
      catalogue.references.map((r) => [r.key, r.min, r.max]),
      [
        ['usd', 10_000, 1e9],
        ['eur', null, null],
        ['gbp', 0.5, null],
        ['aed', null, 1e8],
      ],
    );
  });

  it('rejects a band that is not positive, finite and ordered', () => {
    for (const [min, max] of [[0, 10], [-1, 10], [10, 10], [20, 10], ['1', 10], [1, 'Infinity']]) {
      rejects(folder({ 'x.json': [entry('eur'), entry('usd', { min, max })] }), 'x.json entry 1 (usd)', /\b(min|max)\b/);
    }
    // JSON has no Infinity, but a number too large for a double reads as one.
    const huge = JSON.stringify([entry('usd', { min: 1, max: 7 })]).replace('"max":7', '"max":1e400');
    rejects(folder({ 'x.json': huge }), 'x.json entry 0 (usd)', 'max must be a positive finite number');
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
      assert.ok(error instanceof CatalogueError, 'error instanceof CatalogueError');
      return; // rejecting the alias is also acceptable
    }
    assert.equal(popular[0], 'eur');
  });
});

