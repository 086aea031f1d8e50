import { createRequire } from 'node:module';

/** lossless-json, loaded (as one file) only for a file that is not JSON: a valid config never pays for it. */
const losslessJson = () => createRequire(import.meta.url)('lossless-json') as typeof import('lossless-json');

/** The widest piece of the offending line shown under a JSON syntax error. */
const SHOWN_CHARACTERS = 100;

/** Where a JSON text stops being JSON, as an editor counts (line and column from 1), and that line with a caret under the spot. */
export class JsonSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
    readonly excerpt: string,
  ) {
    super(`line ${line}, column ${column}: ${reason}\n${excerpt}`);
  }
}

/**
 * The config file's JSON. A syntax error is a `JsonSyntaxError`: Node's own
 * message gives a character offset at best, and none for some errors. A
 * byte-order mark, which some editors write, is allowed.
 */
export function parseConfigJson(text: string): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (error) {
    throw syntaxError(body, (error as Error).message);
  }
}

/** lossless-json words every syntax error the same on every Node version, with its offset. */
function syntaxError(text: string, nativeMessage: string): JsonSyntaxError {
  let message = nativeMessage;
  try {
    losslessJson().parse(text);
  } catch (error) {
    message = (error as Error).message;
  }
  const at = / at position (\d+)$/.exec(message);
  const offset = at ? Math.min(Number(at[1]), text.length) : text.length;
  const before = text.slice(0, offset).split(/\r\n|\r|\n/);
  const line = before.length;
  const column = before.at(-1)!.length + 1;
  const lineText = text.split(/\r\n|\r|\n/)[line - 1] ?? '';
  const reason = at ? message.slice(0, at.index) : message;
  return new JsonSyntaxError(reason + trailingCommaHint(text, offset), line, column, pointAt(line, lineText, column));
}

/** The mistake people make most in a hand-written config, said in words when it is the one. */
function trailingCommaHint(text: string, offset: number): string {
  const closing = text[offset];
  const previous = text.slice(0, offset).trimEnd().at(-1);
  return (closing === ']' || closing === '}') && previous === ',' ? ' (JSON allows no comma after the last item)' : '';
}

/** The line, cut to a window around the column when long, and a caret under the column. */
function pointAt(line: number, lineText: string, column: number): string {
  const start = Math.max(0, Math.min(column - 1 - SHOWN_CHARACTERS / 2, lineText.length - SHOWN_CHARACTERS));
  const cutBefore = start > 0 ? '…' : '';
  const cutAfter = start + SHOWN_CHARACTERS < lineText.length ? '…' : '';
  const shown = cutBefore + lineText.slice(start, start + SHOWN_CHARACTERS).replace(/\t/g, ' ') + cutAfter;
  const gutter = `  ${line} | `;
  const caret = ' '.repeat(column - 1 - start + cutBefore.length);
  return `${gutter}${shown}\n${' '.repeat(gutter.length - 2)}| ${caret}^`;
}
