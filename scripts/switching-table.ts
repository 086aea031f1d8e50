/** Writes the item tables of docs/switching.md from data/compat/ and the bundled catalogue (`npm run docs:switching`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCatalogue } from '../src/catalogue/load.js';
import { switchingTables, TABLE_END, TABLE_START } from '../src/compat/item-table.js';
import { BUNDLED_CATALOGUE } from '../src/config.js';

const PAGE = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'switching.md');

const page = readFileSync(PAGE, 'utf8');
const start = page.indexOf(TABLE_START);
const end = page.indexOf(TABLE_END);
if (start === -1 || end === -1) throw new Error(`${PAGE} has no generated-table markers`);
writeFileSync(PAGE, page.slice(0, start) + switchingTables(loadCatalogue(BUNDLED_CATALOGUE)) + page.slice(end + TABLE_END.length));
console.log(`wrote the item tables of ${PAGE}`);
