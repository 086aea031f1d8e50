/**
 * Just enough Markdown reading for the document tests: fenced code blocks,
 * links outside code, and the anchors GitHub gives headings.
 */

export interface CodeBlock {
  /** The info string after the opening fence (`sh`, `json`, or empty). */
  lang: string;
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
}

/** An opening fence, also one indented inside a list item (its indent is taken off the block's lines). */
const FENCE = /^( *)```(\S*)\s*$/;

/** Every fenced code block, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { lang: string; line: number; indent: number; lines: string[] } | null = null;
  markdown.split('\n').forEach((line, index) => {
    const fence = FENCE.exec(line);
    if (open === null) {
      if (fence) open = { lang: fence[2]!, line: index + 1, indent: fence[1]!.length, lines: [] };
    } else if (line.trim() === '```') {
      blocks.push({ lang: open.lang, text: open.lines.join('\n'), line: open.line });
      open = null;
    } else {
      open.lines.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)));
    }
  });
  if (open !== null) throw new Error(`unclosed code block at line ${(open as { line: number }).line}`);
  return blocks;
}

/** The text with fenced blocks and inline code spans blanked, so neither yields links or headings. */
function prose(markdown: string): string[] {
  let inBlock = false;
  return markdown.split('\n').map((line) => {
    if (inBlock) {
      if (line.trim() === '```') inBlock = false;
      return '';
    }
    if (FENCE.test(line)) {
      inBlock = true;
      return '';
    }
    return line.replace(/`[^`]*`/g, '``');
  });
}

export interface Link {
  target: string;
  line: number;
}

/** Every `[text](target)` outside code. */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  prose(markdown).forEach((line, index) => {
    for (const match of line.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) found.push({ target: match[1]!, line: index + 1 });
  });
  return found;
}

/** The anchors of every heading, as GitHub makes them (github-slugger), duplicates numbered. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const lines = markdown.split('\n');
  let inBlock = false;
  for (const line of lines) {
    if (FENCE.test(line) || (inBlock && line.trim() === '```')) {
      inBlock = !inBlock;
      continue;
    }
    if (inBlock) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}
