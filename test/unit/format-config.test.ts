import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE, ConfigError, loadConfig } from '../../src/config.js';
import { checkAgainstCatalogue } from '../../src/config-checks.js';
import { buildPlans } from '../../src/domain/plan.js';
import { tempDir } from '../support/env.js';

const root = tempDir('nerkh-format-config-');
let count = 0;
after(() => root.cleanup());
const catalogue = loadCatalogue(BUNDLED_CATALOGUE);

/** The config of one source, loaded and checked against the bundled catalogue as a start would. */
function load(source: Record<string, unknown>) {
  const dir = join(root.path, `w${count++}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'nerkh.config.json'), JSON.stringify({ sources: [{ name: 'feed', type: 'file', path: 'feed.json', ...source }] }));
  const config = loadConfig({}, dir);
  checkAgainstCatalogue(config, buildPlans(catalogue.popular), catalogue);
  return config;
}

function refused(source: Record<string, unknown>, message: string): void {
  assert.throws(
    () => load(source),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `not a ConfigError: ${String(error)}`);
      assert.ok(error.message.startsWith('config') && error.message.includes(message), `"${error.message}" lacks "${message}"`);
      return true;
    },
  );
}

describe('source formats in the config', () => {
  it('defaults to nerkh and compiles each format', () => {
    assert.deepEqual(load({}).sources[0]!.format, { kind: 'nerkh' });
    const mapping = load({ format: 'mapping', updated_at_path: '$.time', items: { ir_fx_free_usd: "$.data[?@.symbol=='USD'].price", ir_coin_emami: { path: '$.coins.emami', time_path: '$.coins.at', scale: '10' } } }).sources[0]!.format;
    assert.equal(mapping?.kind, 'mapping');
    if (mapping?.kind !== 'mapping') return;
    assert.deepEqual(
      mapping.items.map((item) => [item.sourceKey, item.pathText, item.scale, item.timePath !== null]),
      [
        ['ir_fx_free_usd', "$.data[?@.symbol=='USD'].price", null, false],
        ['ir_coin_emami', '$.coins.emami', '10', true],
      ],
    );
    const ecb = load({ format: 'ecb', items: { intl_fx_eurusd: 'USD', intl_fx_usdjpy: 'JPY/USD' } }).sources[0]!.format;
    assert.deepEqual(ecb, {
      kind: 'ecb',
      items: [
        { sourceKey: 'intl_fx_eurusd', currency: 'USD', per: null },
        { sourceKey: 'intl_fx_usdjpy', currency: 'JPY', per: 'USD' },
      ],
    });
    assert.equal(load({ format: 'csv' }).sources[0]!.format?.kind, 'csv');
  });

  it('names the source and the item of a bad JSONPath', () => {
    refused({ format: 'mapping', items: { ir_fx_free_usd: "$.data[?@.symbol=='USD'" } }, `sources[0].items.ir_fx_free_usd: source "feed": invalid JSONPath "$.data[?@.symbol=='USD'": unclosed bracketed selection ('ol=='USD'':23)`);
    refused({ format: 'mapping', items: { ir_fx_free_usd: 'data.price' } }, `sources[0].items.ir_fx_free_usd: source "feed": invalid JSONPath "data.price": expected '$', found 'd' ('data.pric':0)`);
    refused({ format: 'mapping', items: { ir_fx_free_usd: { path: '$.a', time_path: '$.[' } } }, 'sources[0].items.ir_fx_free_usd.time_path: source "feed": invalid JSONPath "$.[": ');
    refused({ format: 'mapping', updated_at_path: 'time', items: { ir_fx_free_usd: '$.a' } }, 'sources[0].updated_at_path: source "feed": invalid JSONPath "time": ');
  });

  it('names the source and the item of a scale that is not a decimal above zero', () => {
    for (const scale of ['ten', '1e1', '-10', '0', '1,000', '']) {
      refused({ format: 'mapping', items: { ir_fx_free_usd: { path: '$.a', scale } } }, `sources[0].items.ir_fx_free_usd.scale: source "feed": ${JSON.stringify(scale)} is not a decimal above zero (write it as text: "10" turns toman into rial)`);
    }
  });

  it('names an item source_key the catalogue does not have, and the right one for a reference key', () => {
    refused({ format: 'mapping', items: { ir_fx_free_usd: '$.a', ir_fx_fre_usd: '$.b' } }, 'sources[0].items.ir_fx_fre_usd: source "feed": "ir_fx_fre_usd" is no source_key of the catalogue');
    refused({ format: 'ecb', items: { usd_free: 'USD' } }, 'sources[0].items.usd_free: source "feed": "usd_free" is no source_key of the catalogue (the reference usd_free reads source_key "ir_fx_free_usd")');
  });

  it('names an ECB item that is neither a currency code nor a cross', () => {
    const expected = 'is not a currency code ("USD": US dollars per euro) or a cross ("JPY/USD": yen per US dollar)';
    for (const item of ['usd', 'US', 'USD/', 'JPY/USD/EUR', 'JPY-USD', 'DOLLAR']) refused({ format: 'ecb', items: { intl_fx_eurusd: item } }, `sources[0].items.intl_fx_eurusd: source "feed": ${JSON.stringify(item)} ${expected}`);
    refused({ format: 'ecb', items: { intl_fx_eurusd: 'USD/USD' } }, 'sources[0].items.intl_fx_eurusd: source "feed": "USD/USD" is a currency against itself');
    refused({ format: 'ecb', items: { intl_fx_eurusd: { path: '$.a' } } }, 'sources[0].items.intl_fx_eurusd: source "feed": expected a currency code ("USD": US dollars per euro) or a cross ("JPY/USD": yen per US dollar)');
  });

  it('says which fields a format takes', () => {
    refused({ format: 'mapping' }, 'sources[0].items: source "feed": required with format "mapping": which source key is read from where');
    refused({ format: 'ecb', items: {} }, 'sources[0].items: source "feed": required with format "ecb": which source key is read from where');
    refused({ items: { ir_fx_free_usd: '$.a' } }, 'sources[0].items: source "feed": not allowed with format "nerkh": its document names its items itself');
    refused({ format: 'csv', items: { ir_fx_free_usd: '$.a' } }, 'sources[0].items: source "feed": not allowed with format "csv": its document names its items itself');
    refused({ format: 'ecb', updated_at_path: '$.t', items: { intl_fx_eurusd: 'USD' } }, `sources[0].updated_at_path: source "feed": only a "mapping" source has one (this source's format is "ecb")`);
    refused({ format: 'xml' }, 'sources[0].format: "xml" is not one of: nerkh, mapping, ecb, csv');
  });
});
