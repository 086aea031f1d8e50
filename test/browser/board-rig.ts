/**
 * What the /board suites share: a live server (the real service in process,
 * listening on a port) whose first source file the test rewrites, an
 * enterprise key (the stream on a 1 s tier, so a change shows within a second
 * or two), Chromium, and pages that record what goes wrong.
 */
import type { Browser, Page } from 'playwright-core';
import { loadCatalogue } from '../../src/catalogue/load.js';
import { BUNDLED_CATALOGUE } from '../../src/config.js';
import { watchedPage } from './chromium.js';
import { startPageRig } from './page-rig.js';
import { writeSource } from '../support/env.js';
import { SAMPLE, SAMPLE_VALUES, type Harness } from '../support/harness.js';

/** A source's item: a value stamped with the file's time, or with a time of its own. */
export type SourceItem = number | { value: number; updated_at: string };

export interface BoardRig {
  harness: Harness;
  browser: Browser;
  /** The server's address. */
  base: string;
  key: string;
  /** Alpha (the first source), stamped now: every sample rate at its level + 1, then `values` by reference key. */
  writeAlpha(values?: Record<string, SourceItem>): void;
  /** A page `width` × `height` on `base` (another address in front of the server, if given) that records what goes wrong. */
  open(width: number, height?: number, base?: string): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }>;
  close(): Promise<void>;
}

export async function startBoardRig(): Promise<BoardRig> {
  const catalogue = loadCatalogue(BUNDLED_CATALOGUE);
  const rig = await startPageRig('board-user', 'enterprise');
  const { harness, browser, base } = rig;
  return {
    ...rig,
    writeAlpha(values = {}) {
      const items: Record<string, SourceItem> = Object.fromEntries(Object.entries(SAMPLE).map(([name, sourceKey]) => [sourceKey, SAMPLE_VALUES[name as keyof typeof SAMPLE] + 1]));
      for (const [name, value] of Object.entries(values)) {
        const reference = catalogue.lookup(name);
        if (!reference) throw new Error(`no reference ${name} in the bundled catalogue`);
        items[reference.source_key] = value;
      }
      writeSource(harness.config.sources[0]!.path!, items);
    },
    async open(width, height = 900, address = base) {
      const { context, page, problems } = await watchedPage(browser, address, width, height);
      return { page, problems, close: () => context.close() };
    },
  };
}

/** The text the page shows for a number: the browser's own Persian formatting. */
export const persian = (page: Page, value: number): Promise<string> =>
  page.evaluate((n) => new Intl.NumberFormat('fa-IR', { maximumFractionDigits: 8 }).format(n), value);
