/**
 * Text folded for catalogue search (PRODUCT §7): Arabic yeh and kaf (ي ى ك),
 * which many keyboards type, become the Persian ی and ک; the zero-width
 * non-joiner, which Persian writes inside words (سکه‌ها) and search boxes
 * often drop, is removed; Persian and Arabic-Indic digits become ASCII; Latin
 * letters are lower case.
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
