/**
 * Catalogue search (docs/api.md#catalogue): folding, what matches, and the
 * order matches come in.
 */

/**
 * Text folded for catalogue search: Arabic yeh and kaf (ي ى ك), which many
 * keyboards type, become the Persian ی and ک; the zero-width non-joiner,
 * which Persian writes inside words (سکه‌ها) and search boxes often drop or
 * type as a space, is removed; Persian and Arabic-Indic digits become ASCII;
 * Latin letters are lower case.
 */
export function foldForSearch(text: string): string {
  return text.replace(FOLDED, (c) => FOLDS[c] ?? '').toLowerCase();
}

const FOLDS: Record<string, string> = {
  '\u064a': '\u06cc',
  '\u0649': '\u06cc',
  '\u0643': '\u06a9',
  '\u200c': '',
};
for (let digit = 0; digit <= 9; digit++) {
  FOLDS[String.fromCharCode(0x06f0 + digit)] = String(digit);
  FOLDS[String.fromCharCode(0x0660 + digit)] = String(digit);
}

const FOLDED = /[\u064a\u0649\u0643\u200c\u06f0-\u06f9\u0660-\u0669]/g;

/**
 * What separates words, and is ignored when comparing: spaces (the
 * non-joiner is gone by then), and the `_` and `-` of keys and English
 * titles. `بیت کوین`, `بیت‌کوین` and `بیتکوین` then read alike, as do
 * `usd free` and `usd_free`.
 */
const SEPARATORS = /[\s_-]+/;
const ALL_SEPARATORS = /[\s_-]+/g;

/** A folded text with its separators taken out. */
function compact(text: string): string {
  return foldForSearch(text).replace(ALL_SEPARATORS, '');
}

/** A search as typed, folded: its words, and the words run together. */
export interface SearchQuery {
  words: readonly string[];
  /** The words joined by nothing: how a name or title is compared whole. */
  whole: string;
  /** The words joined by one space: one query however it was spaced or written, for caching. */
  canonical: string;
}

/** The query in `text`; null when it holds nothing but separators. */
export function parseQuery(text: string): SearchQuery | null {
  const words = foldForSearch(text).split(SEPARATORS).filter((word) => word !== '');
  if (words.length === 0) return null;
  return { words, whole: words.join(''), canonical: words.join(' ') };
}

/** How well a reference matches, best first; `NO_MATCH` when it does not. */
export const MatchRank = {
  /** The query is the key or an alias (`usd`, `bitcoin`). */
  name: 0,
  /** The query is the whole Persian or English title. */
  title: 1,
  /** A name or a title starts with the query (`دلار` → «دلار آمریکا …»). */
  prefix: 2,
  /** A name or a title holds the query, its words in order. */
  phrase: 3,
  /** Every word of the query is somewhere in the names and titles (`طلا ۱۸` → «طلای ۱۸ عیار»). */
  words: 4,
} as const;
export const NO_MATCH = -1;

/** A reference's names and titles, folded and compacted once, for matching and ranking. */
export class SearchText {
  private readonly names: readonly string[];
  private readonly titles: readonly string[];
  /** Every name and title, one a line: a word never matches across two of them. */
  private readonly all: string;

  constructor(names: readonly string[], titles: readonly string[]) {
    this.names = names.map(compact);
    this.titles = titles.map(compact);
    this.all = [...this.names, ...this.titles].join('\n');
  }

  /** A `MatchRank`, or `NO_MATCH`. */
  rank(query: SearchQuery): number {
    for (const word of query.words) if (!this.all.includes(word)) return NO_MATCH;
    const { whole } = query;
    if (this.names.includes(whole)) return MatchRank.name;
    if (this.titles.includes(whole)) return MatchRank.title;
    if (this.names.some((name) => name.startsWith(whole)) || this.titles.some((title) => title.startsWith(whole))) return MatchRank.prefix;
    if (this.all.includes(whole)) return MatchRank.phrase;
    return MatchRank.words;
  }
}
