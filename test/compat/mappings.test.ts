/**
 * The peer mappings (data/compat/) checked against the bundled catalogue:
 * every mapped reference exists, the items the product names map as it says,
 * a peer name that is also a catalogue alias names that alias's reference,
 * and the loader refuses a malformed file by name. Values convert exactly.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { PeerUnit } from '../../src/compat/peer-unit.js';
import { bindPeerMap, PeerMapError, readBrsapiFile, readNavasanFile } from '../../src/compat/peers.js';
import { tempDir } from '../support/env.js';

const catalogue = loadCatalogue(BUNDLED_CATALOGUE);

describe('data/compat mappings', () => {
  it('map only references the catalogue has, each peer name once', () => {
    const navasan = bindPeerMap(readNavasanFile(), catalogue, (entry) => entry.item);
    const brsapi = bindPeerMap(readBrsapiFile(), catalogue, (entry) => entry.symbol);
    assert.deepEqual(navasan.missing, []);
    assert.deepEqual(brsapi.missing, []);
    // Named by canonical key, so the docs' table names the reference a client gets.
    for (const mapped of [...navasan.entries, ...brsapi.entries]) assert.equal(mapped.entry.reference, mapped.reference.key);
  });

  it('map the items the product names, with their divisors', () => {
    const navasan = new Map(readNavasanFile().map((entry) => [entry.item, [entry.reference, entry.divisor]]));
    const toman = { usd: 'usd_free', usd_sell: 'usd_free_sell', usd_buy: 'usd_free_buy', eur: 'eur_free', gbp: 'gbp_free', aed: 'aed_free', try: 'try_free', '18ayar': 'gold_18k', usdt: 'usdt_irr' };
    const thousands = { sekkeh: 'coin_emami', bahar: 'coin_bahar', nim: 'coin_half', rob: 'coin_quarter', gerami: 'coin_gerami', abshodeh: 'gold_melted_cash' };
    for (const [item, reference] of Object.entries(toman)) assert.deepEqual(navasan.get(item), [reference, '10'], item);
    for (const [item, reference] of Object.entries(thousands)) assert.deepEqual(navasan.get(item), [reference, '10000'], item);
    const brsapi = new Map(readBrsapiFile().map((entry) => [entry.symbol, [entry.reference, entry.divisor, entry.unit]]));
    const named = {
      USD: 'usd_free', EUR: 'eur_free', USDT_IRT: 'usdt_irr', IR_GOLD_18K: 'gold_18k', IR_GOLD_24K: 'gold_24k', IR_GOLD_MELTED: 'gold_melted_cash', IR_COIN_EMAMI: 'coin_emami',
      IR_COIN_BAHAR: 'coin_bahar', IR_COIN_HALF: 'coin_half', IR_COIN_QUARTER: 'coin_quarter', IR_COIN_1G: 'coin_gerami',
    };
    for (const [symbol, reference] of Object.entries(named)) assert.deepEqual(brsapi.get(symbol), [reference, '10', 'تومان'], symbol);
    assert.deepEqual(brsapi.get('XAUUSD'), ['gold_ounce', '1', 'دلار']);
    assert.deepEqual(brsapi.get('BTC'), ['btc_usd', '1', 'دلار']);
  });

  it('a peer name that is a catalogue alias names that alias\'s reference, and every rial price is shown in toman or thousands', () => {
    for (const entry of readNavasanFile()) {
      const alias = catalogue.lookup(entry.item);
      if (alias) assert.equal(alias.key, entry.reference, `navasan ${entry.item}`);
      const reference = catalogue.get(entry.reference)!;
      assert.ok(reference.currency === 'IRR' ? ['10', '10000'].includes(entry.divisor) : entry.divisor !== '10' && entry.divisor !== '10000', `navasan ${entry.item}: ${entry.divisor} for ${reference.currency}`);
    }
    for (const entry of readBrsapiFile()) {
      const alias = catalogue.lookup(entry.symbol.toLowerCase());
      if (alias && entry.group !== 'cryptocurrency') assert.equal(alias.key, entry.reference, `BrsApi ${entry.symbol}`);
      const reference = catalogue.get(entry.reference)!;
      assert.equal(entry.unit, reference.currency === 'IRR' ? 'تومان' : 'دلار', `BrsApi ${entry.symbol}`);
      assert.equal(entry.divisor, reference.currency === 'IRR' ? '10' : '1', `BrsApi ${entry.symbol}`);
    }
  });

  it('the loader refuses a malformed file, naming the item and field', () => {
    const dir = tempDir('nerkh-compat-');
    try {
      const write = (name: string, document: unknown) => {
        const path = join(dir.path, name);
        writeFileSync(path, JSON.stringify(document));
        return path;
      };
      assert.throws(() => readNavasanFile(write('a.json', { peer: 'navasan', items: [{ item: 'usd', reference: 'usd_free', divisor: '3' }] })), (error: Error) => error instanceof PeerMapError && /item 0: "divisor"/.test(error.message));
      assert.throws(() => readNavasanFile(write('b.json', { peer: 'navasan', items: [{ item: 'usd', reference: 'usd_free', divisor: '10', note: 1 }] })), /unknown field "note"/);
      assert.throws(() => readNavasanFile(write('c.json', { peer: 'brsapi', items: [] })), /expected \{"peer": "navasan"/);
      assert.throws(() => readBrsapiFile(write('d.json', { peer: 'brsapi', items: [{ symbol: 'USD', reference: 'usd_free', divisor: '10', group: 'fx', name_en: 'x', name: 'y', unit: 'تومان' }] })), /"group" must be one of/);
      const twice = [
        { item: 'usd', reference: 'usd_free', divisor: '10' },
        { item: 'usd', reference: 'eur_free', divisor: '10' },
      ];
      assert.throws(() => bindPeerMap(twice, catalogue, (entry) => entry.item), /usd is mapped twice/);
      assert.deepEqual(bindPeerMap([{ item: 'gone', reference: 'no_such_reference', divisor: '10' }], catalogue, (entry) => entry.item).missing.length, 1);
    } finally {
      dir.cleanup();
    }
  });

  it('converts exactly, whatever the digits', () => {
    assert.equal(new PeerUnit('10').of('1234565'), '123456.5');
    assert.equal(new PeerUnit('10').of('1000'), '100');
    assert.equal(new PeerUnit('10000').of('1234567891'), '123456.7891');
    assert.equal(new PeerUnit('10000').of('-25000'), '-2.5');
    assert.equal(new PeerUnit('10').of('123456789012345678901'), '12345678901234567890.1');
    assert.equal(new PeerUnit('1').of('4000.250'), '4000.25');
    assert.equal(new PeerUnit('1000000').of('0.0123'), '0.0000000123');
    assert.equal(new PeerUnit('10').of('1e3'), '100');
    assert.throws(() => new PeerUnit('20'), /power of ten/);
  });
});
