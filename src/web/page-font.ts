/**
 * The pages' own typeface: Vazirmatn, from the `vazirmatn` package (SIL Open
 * Font License 1.1, its text served beside the font). Served by this server, so
 * a page asks nothing of another host, and no reader's system font stands in
 * for it: a fallback without Persian forms draws the decimal separator «٫»
 * like «ر». One variable file carries every weight, Latin included.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface PageFont {
  /** `/fonts/vazirmatn-<content hash>.woff2`: a new file gets a new address, so the old one may be cached for good. */
  path: string;
  body: Buffer;
  licencePath: string;
  licence: Buffer;
  /** What every page's style sheet begins with: the @font-face rule and the isolation of the English asides. */
  style: string;
}

export const FONT_CACHE_CONTROL = 'public, max-age=31536000, immutable';

let loaded: PageFont | undefined;

/**
 * Read once per process, through the package's own resolution (not a path
 * into node_modules), so it works from src/, from dist/ and from an
 * installed copy alike.
 */
export function loadPageFont(): PageFont {
  if (loaded) return loaded;
  const resolve = createRequire(import.meta.url).resolve;
  const body = readFileSync(resolve('vazirmatn/fonts/webfonts/Vazirmatn[wght].woff2'));
  const licence = readFileSync(resolve('vazirmatn/OFL.txt'));
  const path = `/fonts/vazirmatn-${createHash('sha256').update(body).digest('hex').slice(0, 16)}.woff2`;
  loaded = { path, body, licencePath: '/fonts/vazirmatn-OFL.txt', licence, style: pageTypography(path) };
  return loaded;
}

/**
 * The rules every page shares. `.en` is the English aside each page puts
 * after its Persian (a span inside a right-to-left line, or a line of its
 * own): isolated, it is laid out left to right as a whole, so its numbers,
 * parentheses and full stop stay where English puts them, and the Persian
 * around it is not reordered by it either.
 */
export function pageTypography(fontPath: string): string {
  return `@font-face { font-family: Vazirmatn; src: url("${fontPath}") format("woff2"); font-weight: 100 900; font-style: normal; font-display: swap; }
.en { direction: ltr; unicode-bidi: isolate; }
`;
}
