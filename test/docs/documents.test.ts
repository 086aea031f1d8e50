/**
 * The project's documents hold together: the README stays short and opens with
 * the two commands, every relative link and every `docs/…#anchor` pointer in
 * the code leads somewhere that exists, nothing points outside the repository,
 * and the config examples in docs/configuration.md and docs/quick-starts.md are ones the server accepts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { loadReferenceData } from '../../src/config-checks.js';
import { loadConfig } from '../../src/config.js';
import { createDocumentParser } from '../../src/sources/formats/index.js';
import type { SourceConfig } from '../../src/sources/monitor.js';
import { parseSourceDocument } from '../../src/sources/parse.js';
import { ROOT } from '../e2e/helpers.js';
import { tempDir } from '../support/env.js';
import { anchors, codeBlocks, links } from './markdown.js';

const MAX_README_LINES = 200;
/** The top-level fields of a config file: a JSON example with any other is a source's document. */
const CONFIG_FIELDS = new Set(['sources', 'source_priority', 'screening', 'plans', 'catalogue', 'history', 'timezone', 'webhooks', 'derived', 'markets']);

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Every file under `dir` (relative to the root) whose name ends with one of `endings`. */
function filesUnder(dir: string, endings: string[]): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(join(ROOT, path))) {
      if (name === 'node_modules' || name === 'dist') continue;
      const child = join(path, name);
      if (statSync(join(ROOT, child)).isDirectory()) walk(child);
      else if (endings.some((ending) => name.endsWith(ending))) found.push(child);
    }
  };
  walk(dir);
  return found;
}

/** The documents a reader follows links through. */
const DOCUMENTS = [
  'README.md',
  'CONTRIBUTING.md',
  ...filesUnder('docs', ['.md']),
  ...filesUnder('bench/results', ['.md']),
  'src/bus/README.md',
  'data/catalogue/README.md',
  'clients/typescript/README.md',
];

const anchorsOf = new Map<string, Set<string>>();
function anchorsIn(path: string): Set<string> {
  let found = anchorsOf.get(path);
  if (!found) anchorsOf.set(path, (found = anchors(readFileSync(path, 'utf8'))));
  return found;
}

/** Why `target` (a path relative to the root, with an optional #anchor) leads nowhere; null when it leads somewhere. */
function brokenTarget(absolute: string, anchor: string | undefined): string | null {
  if (!existsSync(absolute)) return 'no such file';
  if (anchor === undefined || anchor === '') return null;
  if (!absolute.endsWith('.md')) return 'an anchor into a file that is not Markdown';
  return anchorsIn(absolute).has(anchor) ? null : `no heading with anchor #${anchor} (has: ${[...anchorsIn(absolute)].join(', ')})`;
}

describe('the documents', () => {
  it(`README.md is at most ${MAX_README_LINES} lines and opens with the two commands`, () => {
    const readme = read('README.md');
    const lines = readme.split('\n').length;
    assert.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines (at most ${MAX_README_LINES})`);
    const first = codeBlocks(readme)[0];
    assert.ok(first, 'README.md has no code block');
    const commands = first.text.split('\n').map((line) => line.replace(/#.*$/, '').trim());
    assert.deepEqual(commands, ['npm ci && npm start', 'npm ci && npm test'], `the first code block of README.md:\n${first.text}`);
    // Nothing but the title comes before the commands.
    assert.deepEqual(readme.split('\n').slice(0, first.line - 1).filter((line) => line.trim() !== '').length, 1, 'only the title precedes the two commands');
  });

  it('every relative link in the documents leads to an existing file (and heading)', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const document of DOCUMENTS) {
      const absolute = join(ROOT, document);
      for (const link of links(readFileSync(absolute, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // http:, https:, mailto:
        const [path, anchor] = link.target.split('#') as [string, string | undefined];
        const target = path === '' ? absolute : resolve(dirname(absolute), decodeURIComponent(path));
        if (!target.startsWith(ROOT + '/') && target !== ROOT) {
          broken.push(`${document}:${link.line}: ${link.target}: outside the repository`);
          continue;
        }
        const why = brokenTarget(target, anchor);
        checked++;
        if (why) broken.push(`${document}:${link.line}: ${link.target}: ${why}`);
      }
    }
    assert.deepEqual(broken, []);
    assert.ok(checked > 50, `only ${checked} relative links found: is the link reader broken?`);
  });

  it('every docs/… pointer in the code names an existing page and heading', () => {
    const broken: string[] = [];
    let checked = 0;
    const sources = [...filesUnder('src', ['.ts']), ...filesUnder('test', ['.ts']), ...filesUnder('bench', ['.ts', '.mjs']), 'bin/nerkh.js', 'eslint.config.js'];
    for (const file of sources) {
      for (const match of read(file).matchAll(/\bdocs\/([A-Za-z0-9_-]+\.md)(?:#([a-z0-9-]+))?/g)) {
        const why = brokenTarget(join(ROOT, 'docs', match[1]!), match[2]);
        checked++;
        if (why) broken.push(`${file}: ${match[0]}: ${why}`);
      }
    }
    assert.deepEqual(broken, []);
    assert.ok(checked >= 25, `only ${checked} docs/ pointers found in the code`);
  });

  it('nothing in the repository points at documents outside it', () => {
    const outside = /PRODUCT(\.md| §)|\.\.\/shared\b|\/work\/shared/;
    const files = [
      ...filesUnder('src', ['']),
      ...filesUnder('docs', ['']),
      ...filesUnder('test', ['']),
      ...filesUnder('bench', ['.ts', '.mjs', '.md']),
      ...filesUnder('data', ['.md']),
      ...filesUnder('deploy', ['']),
      ...filesUnder('clients/typescript/src', ['']),
      'README.md',
      'CONTRIBUTING.md',
      'eslint.config.js',
      'bin/nerkh.js',
    ];
    const found = files.flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((line, index) => (outside.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(found, []);
    assert.ok(files.some((file) => file.startsWith('src/')) && files.some((file) => file.startsWith('docs/')), 'src/ and docs/ were searched');
  });

  it('every `docker compose … up` in the guides comes after the step that makes deploy/.env (compose refuses to start without it)', () => {
    const missing: string[] = [];
    let found = 0;
    for (const document of ['README.md', 'docs/operations.md', 'docs/quick-starts.md']) {
      const lines = read(document).split('\n');
      lines.forEach((line, index) => {
        if (!/docker compose -f deploy\/compose\.yaml up\b/.test(line)) return;
        found++;
        // The same line (a table row) or one of the three before it (a code block) copies the example.
        const before = lines.slice(Math.max(0, index - 3), index + 1).join('\n');
        if (!before.includes('cp deploy/.env.example deploy/.env')) missing.push(`${document}:${index + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(missing, []);
    assert.ok(found >= 3, `only ${found} compose commands found in README.md, docs/operations.md and docs/quick-starts.md`);
  });

  it('the config examples in docs/configuration.md and docs/quick-starts.md are accepted, and the source documents parse', () => {
    const blocks = ['docs/configuration.md', 'docs/quick-starts.md'].flatMap((file) =>
      codeBlocks(read(file))
        .filter((block) => ['json', 'xml', 'csv'].includes(block.lang))
        .map((block) => ({ ...block, file })),
    );
    let configs = 0;
    let documents = 0;
    let feeds = 0;
    /** The last source of the config example read last: a feed example that follows it is in its format. */
    let lastSource: { source: SourceConfig; wanted: Set<string> } | null = null;
    for (const block of blocks) {
      const json = block.lang === 'json' ? (JSON.parse(block.text) as Record<string, unknown>) : null;
      if (json && 'items' in json) {
        const data = parseSourceDocument(block.text, Date.now(), Date.now());
        assert.equal(data.dropped, 0, `the source document at line ${block.line} drops items`);
        assert.ok(data.items.size > 0, 'data.items.size > 0');
        documents++;
        continue;
      }
      if (json === null || !Object.keys(json).every((field) => CONFIG_FIELDS.has(field))) {
        // A feed in another format, shown after the config that reads it: every item it names must read.
        assert.ok(lastSource && lastSource.source.format?.kind !== 'nerkh', `the feed example at ${block.file}:${block.line} follows no config of its format`);
        const parser = createDocumentParser(lastSource.source.format, lastSource.wanted);
        parser.write(block.text);
        const data = parser.finish({ fallbackTime: Date.now(), now: Date.now() });
        assert.deepEqual(data.dropReasons, [], `the feed example at ${block.file}:${block.line} drops items`);
        assert.ok(data.items.size > 0, 'data.items.size > 0');
        feeds++;
        continue;
      }
      const dir = tempDir('nerkh-docs-config-');
      try {
        mkdirSync(join(dir.path, 'etc'));
        const path = join(dir.path, 'etc', 'nerkh.config.json');
        writeFileSync(path, block.text);
        const config = loadConfig({ NERKH_CONFIG: path, NERKH_DATA_DIR: join(dir.path, 'var') }, dir.path);
        // The checks a real start makes against the catalogue: plans, source priority, screening, item keys.
        const { catalogue } = loadReferenceData(config);
        for (const source of config.sources) if (source.path) assert.ok(relative(join(dir.path, 'etc'), source.path).startsWith('feeds'), `${source.path} is relative to the config file`);
        lastSource = { source: config.sources.at(-1)!, wanted: new Set(catalogue.references.map((reference) => reference.source_key)) };
        configs++;
      } catch (error) {
        throw new Error(`the config example at ${block.file}:${block.line} is refused: ${(error as Error).message}`, { cause: error });
      } finally {
        dir.cleanup();
      }
    }
    assert.ok(feeds >= 3, `${feeds} feed examples checked`);
    assert.ok(configs >= 4, `${configs} config examples checked`);
    assert.ok(documents >= 1, `${documents} source documents checked`);
  });
});
