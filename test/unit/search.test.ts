import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Catalogue } from '../../src/catalogue/catalogue.js';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { foldForSearch, MatchRank, NO_MATCH, parseQuery, SearchText } from '../../src/domain/search.js';

const ZWNJ = '\u200c';

describe('search folding', () => {
  it('reads Arabic yeh and kaf as the Persian letters, and both digit sets as ASCII', () => {
    assert.equal(foldForSearch('سكه'), 'سکه');
    assert.equal(foldForSearch('روپيه'), 'روپیه');
    assert.equal(foldForSearch('موسى'), 'موسی');
    assert.equal(foldForSearch('۱۸ عیار'), '18 عیار');
    assert.equal(foldForSearch('١٨ عيار'), '18 عیار');
    assert.equal(foldForSearch(`بیت${ZWNJ}کوین BTC`), 'بیتکوین btc');
  });

  it('reads a query by its words: spaces, non-joiners, _ and - all separate alike', () => {
    const spaced = parseQuery('  بیت   کوین ')!;
    assert.deepEqual(spaced.words, ['بیت', 'کوین']);
    assert.equal(spaced.whole, 'بیتکوین');
    assert.equal(spaced.canonical, 'بیت کوین');
    assert.equal(parseQuery(`بیت${ZWNJ}کوین`)!.whole, 'بیتکوین');
    assert.deepEqual(parseQuery('USD_free')!.words, ['usd', 'free']);
    assert.deepEqual(parseQuery('free-market')!.words, ['free', 'market']);
    assert.equal(parseQuery(' _ - '), null, 'separators only: no query');
  });

  it('ranks a name above a whole title, above a prefix, a phrase and scattered words', () => {
    const text = new SearchText(['gold_18k', 'tala_18'], ['طلای ۱۸ عیار (هر گرم)', '18k gold (per gram)']);
    const rank = (q: string) => text.rank(parseQuery(q)!);
    assert.equal(rank('gold_18k'), MatchRank.name);
    assert.equal(rank('tala 18'), MatchRank.name, 'an alias, spaced');
    assert.equal(rank('طلای ۱۸ عیار (هر گرم)'), MatchRank.title);
    assert.equal(rank('طلاي 18'), MatchRank.prefix, 'Arabic yeh, ASCII digits');
    assert.equal(rank('عیار'), MatchRank.phrase);
    assert.equal(rank('طلا ۱۸'), MatchRank.words);
    assert.equal(rank('طلا ۲۴'), NO_MATCH);
    assert.equal(rank('gold coin'), NO_MATCH, 'every word must be found');
  });
});

describe('searching the bundled catalogue', () => {
  let catalogue: Catalogue;
  before(() => {
    catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  });
  const keys = (q: string) => catalogue.search(q).map((reference) => reference.key);

  it('finds bitcoin with a space where the title has a non-joiner, and without either', () => {
    for (const q of ['بیت کوین', `بیت${ZWNJ}کوین`, 'بیتکوین', 'بيت كوين']) {
      const found = keys(q);
      assert.equal(found[0], 'btc_usd', `${q}: ${found.join(', ')}`);
      assert.ok(found.includes('btc_irr'), `${q}: ${found.join(', ')}`);
    }
  });

  it('finds 18k gold first for «طلا ۱۸», with either digits', () => {
    for (const q of ['طلا ۱۸', 'طلا 18', 'طلا ١٨', 'طلای ۱۸']) {
      const found = keys(q);
      assert.equal(found[0], 'gold_18k', `${q}: ${found.join(', ')}`);
      assert.ok(!found.includes('gold_24k'), `${q}: 24k gold is not 18k`);
    }
  });

  it('puts the free-market dollar first for «دلار» and for «dollar»', () => {
    const persian = keys('دلار');
    assert.equal(persian[0], 'usd_free', persian.slice(0, 5).join(', '));
    assert.ok(persian.length > 50, 'every dollar is still listed');
    assert.equal(keys('dollar')[0], 'usd_free');
  });

  it('ranks an exact key or alias first, whatever else matches', () => {
    assert.equal(keys('usd')[0], 'usd_free');
    assert.equal(keys('btc')[0], 'btc_usd');
    assert.equal(keys('bitcoin')[0], 'btc_usd');
    assert.equal(keys('usd free')[0], 'usd_free');
    assert.equal(keys('eur_usd')[0], 'fx_eurusd');
  });

  it('finds the same with Arabic letters, and orders them the same', () => {
    assert.deepEqual(keys('سكه'), keys('سکه'));
    assert.equal(keys('سکه').length, 37);
    assert.deepEqual(keys('روپيه'), keys('روپیه'));
    assert.ok(keys('روپیه').length > 0, 'keys(\'روپیه\').length > 0');
  });

  it('lists everything in catalogue order for a query of separators', () => {
    assert.deepEqual(keys(' _ '), catalogue.references.map((reference) => reference.key));
  });
});
