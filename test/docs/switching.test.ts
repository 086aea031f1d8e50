/**
 * docs/switching.md's item tables are those `npm run docs:switching` writes
 * from data/compat/ and the catalogue: a mapping changed without the page
 * (or the page edited by hand) fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { switchingTables, TABLE_END, TABLE_START } from '../../src/compat/item-table.js';
import { readBrsapiFile, readNavasanFile } from '../../src/compat/peers.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { ROOT } from '../e2e/helpers.js';

describe('docs/switching.md', () => {
  const page = readFileSync(join(ROOT, 'docs', 'switching.md'), 'utf8');

  it('holds the item tables generated from data/compat/ (run `npm run docs:switching` after changing a mapping)', () => {
    const start = page.indexOf(TABLE_START);
    const end = page.indexOf(TABLE_END);
    assert.ok(start !== -1 && end > start, 'the generated-table markers');
    assert.equal(page.slice(start, end + TABLE_END.length), switchingTables(loadCatalogue(BUNDLED_CATALOGUE)));
  });

  it('lists every mapped name once', () => {
    for (const name of [...readNavasanFile().map((entry) => entry.item), ...readBrsapiFile().map((entry) => entry.symbol)]) {
      assert.equal(page.split(`| \`${name}\` |`).length - 1, 1, name);
    }
  });
});
